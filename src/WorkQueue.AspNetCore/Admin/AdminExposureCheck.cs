using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.HttpOverrides;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace WorkQueue.AspNetCore.Admin;

/// <summary>
/// Warns once the application has started when forwarded-headers handling is on while admin endpoints still rely on the
/// loopback-only default: behind a reverse proxy on the same host every client connects from loopback.
/// </summary>
/// <remarks>
/// The check runs at <see cref="IHostApplicationLifetime.ApplicationStarted"/>, when the pipeline is built and every
/// convention chained after <c>MapWorkQueueAdmin</c> (such as <c>.RequireAuthorization(...)</c>) is in the endpoints'
/// metadata. Forwarded-headers handling counts as on when any of these holds: <c>app.UseForwardedHeaders()</c> was
/// called (it records <c>"ForwardedHeadersAdded"</c> in the application builder's properties); the host adds the
/// middleware itself (<c>ASPNETCORE_FORWARDEDHEADERS_ENABLED=true</c>); or the application configured
/// <see cref="ForwardedHeadersOptions"/> (<c>services.Configure&lt;ForwardedHeadersOptions&gt;(...)</c>). The overload
/// <c>UseForwardedHeaders(options)</c> leaves no trace to find; requests it processed are still refused, because the
/// middleware leaves <c>X-Original-For</c> behind.
/// </remarks>
internal static partial class AdminExposureCheck
{
    // The key UseForwardedHeaders() sets in IApplicationBuilder.Properties (aspnetcore ForwardedHeadersExtensions.cs).
    private const string ForwardedHeadersAddedKey = "ForwardedHeadersAdded";

    // The configuration key behind ASPNETCORE_FORWARDEDHEADERS_ENABLED (aspnetcore ForwardedHeadersOptionsSetup.cs).
    private const string ForwardedHeadersEnabledKey = "FORWARDEDHEADERS_ENABLED";

    public static void Register(IEndpointRouteBuilder endpoints, ILogger logger)
    {
        var lifetime = endpoints.ServiceProvider.GetService<IHostApplicationLifetime>();
        lifetime?.ApplicationStarted.Register(() =>
        {
            try
            {
                Run(endpoints, logger);
            }
            catch (Exception ex)
            {
                // A diagnostic must never stop the application.
                Log.CheckFailed(logger, ex);
            }
        });
    }

    /// <summary>Runs the check now and logs a warning for each prefix whose endpoints are exposed.</summary>
    private static void Run(IEndpointRouteBuilder endpoints, ILogger logger)
    {
        string? reason = FindForwardedHeadersHandling(endpoints);
        if (reason is null)
        {
            return;
        }

        var exposed = endpoints.DataSources
            .SelectMany(source => source.Endpoints)
            .Where(endpoint => endpoint.Metadata.GetMetadata<AdminEndpointMetadata>() is not null && !LoopbackOnlyFilter.IsSecured(endpoint.Metadata))
            .Select(endpoint => endpoint.Metadata.GetMetadata<AdminEndpointMetadata>()!.Prefix)
            .Distinct(StringComparer.Ordinal)
            .ToArray();
        foreach (string prefix in exposed)
        {
            Log.ForwardedHeadersWithoutPolicy(logger, prefix, reason);
        }
    }

    private static string? FindForwardedHeadersHandling(IEndpointRouteBuilder endpoints)
    {
        if (endpoints is IApplicationBuilder app && app.Properties.ContainsKey(ForwardedHeadersAddedKey))
        {
            return "app.UseForwardedHeaders() was called";
        }

        var services = endpoints.ServiceProvider;
        if (bool.TryParse(services.GetService<IConfiguration>()?[ForwardedHeadersEnabledKey], out bool enabled) && enabled)
        {
            return "ASPNETCORE_FORWARDEDHEADERS_ENABLED is true";
        }

        // The web host registers its own setup for ForwardedHeadersOptions, which does something only when the
        // setting above is on; anything else was configured by the application.
        bool configured = services.GetServices<IConfigureOptions<ForwardedHeadersOptions>>()
            .Any(setup => !IsHostSetup(setup.GetType()));
        return configured ? "ForwardedHeadersOptions are configured" : null;
    }

    private static bool IsHostSetup(Type type) =>
        type.Name == "ForwardedHeadersOptionsSetup" && type.Assembly.GetName().Name == "Microsoft.AspNetCore";

    private static partial class Log
    {
        [LoggerMessage(401, LogLevel.Warning, "Forwarded-headers handling is on ({Reason}) but the WorkQueue admin endpoints at {Prefix} have no authorization policy. Behind a reverse proxy on the same host every client connects from loopback: requests that carry forwarding headers are refused, but only an authorization policy (MapWorkQueueAdmin(...).RequireAuthorization(...)) protects the endpoints there.", EventName = "AdminForwardedHeadersWithoutPolicy")]
        public static partial void ForwardedHeadersWithoutPolicy(ILogger logger, string prefix, string reason);

        [LoggerMessage(402, LogLevel.Warning, "The WorkQueue admin startup check failed.", EventName = "AdminExposureCheckFailed")]
        public static partial void CheckFailed(ILogger logger, Exception exception);
    }
}
