using OpenTelemetry.Metrics;
using OpenTelemetry.Trace;
using PayCallbackApi.Admin;
using WorkQueue;

namespace PayCallbackApi.Diagnostics;

/// <summary>
/// The sample's OpenTelemetry: WorkQueue's meter and activity source, ASP.NET Core and the runtime (the thread pool's
/// queue length and thread count are the incident's signal), scraped at <c>GET /metrics</c> in Prometheus text format.
/// </summary>
internal static class OpenTelemetrySetup
{
    public const string MetricsPath = "/metrics";

    /// <summary>The standard OpenTelemetry setting; when it is set, traces are also sent there over OTLP.</summary>
    public const string OtlpEndpointKey = "OTEL_EXPORTER_OTLP_ENDPOINT";

    /// <summary>
    /// Adds metrics (with the Prometheus exporter) and tracing, sampled at <see cref="PayCallbackOptions.TraceSampleRatio"/>;
    /// traces are exported only when an OTLP endpoint is configured.
    /// </summary>
    public static IServiceCollection AddSampleOpenTelemetry(this IServiceCollection services, IConfiguration configuration)
    {
        bool otlp = !string.IsNullOrEmpty(configuration[OtlpEndpointKey]);
        double ratio = configuration.GetValue($"{PayCallbackOptions.Section}:{nameof(PayCallbackOptions.TraceSampleRatio)}", new PayCallbackOptions().TraceSampleRatio);
        services.AddOpenTelemetry()
            .WithMetrics(metrics => metrics
                .AddMeter(WorkQueueTelemetry.MeterName)
                .AddAspNetCoreInstrumentation()
                .AddRuntimeInstrumentation()
                .AddPrometheusExporter())
            .WithTracing(tracing =>
            {
                // Head sampling: a share of the callbacks that arrive without a trace context, and every one whose
                // caller sampled it. An unsampled callback's jobs record no span either (their parent is not sampled).
                tracing
                    .SetSampler(new ParentBasedSampler(new TraceIdRatioBasedSampler(ratio)))
                    .AddAspNetCoreInstrumentation(o => o.Filter = context => !IsScrapeOrProbe(context.Request.Path))
                    .AddSource(WorkQueueTelemetry.ActivitySourceName);
                if (otlp)
                {
                    tracing.AddOtlpExporter();
                }
            });
        return services;
    }

    /// <summary>
    /// Maps <c>GET /metrics</c>, protected like the admin endpoints: the admin key when one is set, otherwise direct
    /// loopback clients only.
    /// </summary>
    public static IEndpointConventionBuilder MapSampleMetrics(this IEndpointRouteBuilder endpoints, bool adminKeySet)
    {
        var metrics = endpoints.MapPrometheusScrapingEndpoint(
            MetricsPath,
            meterProvider: null,
            configureBranchedPipeline: adminKeySet ? null : LoopbackOnly.Apply,
            optionsName: null);
        return adminKeySet ? metrics.RequireAuthorization(AdminKeyAuthentication.Policy) : metrics;
    }

    private static bool IsScrapeOrProbe(PathString path) =>
        path.StartsWithSegments(MetricsPath) || path.StartsWithSegments("/health");
}
