using System.Diagnostics;
using System.Net;
using OpenTelemetry.Trace;
using PayCallbackApi.Tests.TestSupport;
using WorkQueue;

namespace PayCallbackApi.Tests.Diagnostics;

/// <summary>
/// The sample's traces (<c>Diagnostics/OpenTelemetrySetup.cs</c>): a callback's request span is the parent of its jobs'
/// spans, whether the queues keep their jobs in memory or in Redis (the trace context is stored with a durable job).
/// </summary>
public sealed class TracingTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Theory]
    [InlineData(ProcessingMode.Queue)]
    [InlineData(ProcessingMode.Durable)]
    public async Task Callback_RequestSpanIsParentOfItsJobSpan_AndThatJobOfTheLegacyJob(ProcessingMode mode)
    {
        var spans = new SpanRecorder();
        await using var app = new PayCallbackApp(redis.Server, mode)
        {
            ConfigureTestServices = services => services.ConfigureOpenTelemetryTracerProvider(t => t.AddInMemoryExporter(spans)),
        };
        using var client = app.CreateClient();
        // The caller's own trace context, so this test's spans are told apart from other apps' in the same process.
        var traceId = ActivityTraceId.CreateRandom();
        var callerSpanId = ActivitySpanId.CreateRandom();
        string orderId = $"o-trace-{Guid.NewGuid():N}";
        using var callback = PayCallbackApp.SignedCallback(PayCallbackApp.Body(orderId, $"p-{Guid.NewGuid():N}"));
        callback.Headers.Add("traceparent", $"00-{traceId}-{callerSpanId}-01");

        using var response = await client.SendAsync(callback);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        await Wait.UntilAsync(
            () => spans.InTrace(traceId) is var trace
                && trace.Count(s => s.Source.Name == WorkQueueTelemetry.ActivitySourceName) == 2
                && trace.Any(s => s.Kind == ActivityKind.Server),
            "the request span and the two job spans (payments, then the provider calls on legacy) are exported");
        var trace = spans.InTrace(traceId);
        var request = Assert.Single(trace, s => s.Kind == ActivityKind.Server);
        Assert.Equal(callerSpanId, request.ParentSpanId);
        Assert.Equal("/api/pay/callback", request.GetTagItem("http.route"));
        var job = Assert.Single(trace, s => s.Source.Name == WorkQueueTelemetry.ActivitySourceName && Equals(s.GetTagItem("workqueue.queue"), SampleQueues.Payments));
        Assert.Equal(request.SpanId, job.ParentSpanId);
        Assert.Equal(ActivityKind.Consumer, job.Kind);
        Assert.Equal("payments process", job.DisplayName);
        Assert.Equal("success", job.GetTagItem("workqueue.job.outcome"));
        Assert.Equal(1, Convert.ToInt32(job.GetTagItem("workqueue.job.attempt"), System.Globalization.CultureInfo.InvariantCulture));
        var legacy = Assert.Single(trace, s => s.Source.Name == WorkQueueTelemetry.ActivitySourceName && Equals(s.GetTagItem("workqueue.queue"), "legacy"));
        Assert.Equal(job.SpanId, legacy.ParentSpanId);
    }
}
