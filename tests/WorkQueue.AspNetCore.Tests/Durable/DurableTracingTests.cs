using System.Diagnostics;
using Microsoft.Extensions.DependencyInjection;
using OpenTelemetry;
using OpenTelemetry.Trace;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Traces cross Redis: a durable job's span, on whichever instance runs it, has the enqueuing activity as its parent
/// (its W3C context stored with the job), retries and scheduled jobs included; nothing is stored without an activity.
/// Two hosts on a real redis-server, spans exported by OpenTelemetry's in-memory exporter.
/// </summary>
public sealed class DurableTracingTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private static readonly ActivitySource Requests = new("WorkQueue.Tests.DurableTracing");

    [Fact]
    public async Task EnqueuedInAnActivity_JobSpanOnAnotherHost_HasItAsParent_RetriesAndScheduledJobsToo()
    {
        var spans = new List<Activity>();
        using var tracing = Sdk.CreateTracerProviderBuilder()
            .AddSource(WorkQueueTelemetry.ActivitySourceName, Requests.Name)
            .SetSampler(new AlwaysOnSampler())
            .AddInMemoryExporter(spans)
            .Build();
        var log = new JobLog { Behavior = static (job, call, _) => job.N == 2 && call == 1 ? throw new InvalidOperationException("first try") : ValueTask.CompletedTask };
        string prefix = DurableTestHost.NewPrefix();
        await using var producer = await DurableTestHost.StartAsync(redis.Server, log, prefix, "producer", configureDurable: d => d.Consume = false);
        var queue = producer.Services.GetRequiredKeyedService<IWorkQueue>(DurableTestHost.Queue);

        ActivityTraceId traceId;
        ActivitySpanId requestSpan;
        string[] ids;
        using (var request = Requests.StartActivity("POST /pay", ActivityKind.Server))
        {
            Assert.NotNull(request);
            (traceId, requestSpan) = (request.TraceId, request.SpanId);
            ids =
            [
                (await queue.EnqueueAsync<TestJobHandler, TestJob>(new TestJob(1), new JobOptions())).JobId,
                (await queue.EnqueueAsync<TestJobHandler, TestJob>(new TestJob(2), new JobOptions())).JobId,
                await queue.ScheduleAsync<TestJobHandler, TestJob>(new TestJob(3), TimeSpan.FromMilliseconds(300)),
            ];
        }

        // Outside any activity: nothing is stored with the job (the default type's payload stays bare).
        string untraced = (await queue.EnqueueAsync<TestJobHandler, TestJob>(new TestJob(4), new JobOptions())).JobId;
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var entries = await client.GetDatabase().StreamRangeAsync(DurableTestHost.StreamKey(prefix));
        Assert.StartsWith(" 00-" + traceId, (string?)entries.Single(e => e.Id == ids[0])["p"]);
        Assert.StartsWith("{", (string?)entries.Single(e => e.Id == untraced)["p"]);

        await using var consumer = await DurableTestHost.StartAsync(redis.Server, log, prefix, "consumer", configure: o =>
        {
            o.Retry.MaxAttempts = 2;
            o.Retry.BaseDelay = TimeSpan.FromMilliseconds(10);
        });
        await log.WaitUntilAsync(() => log.Completed == 4, "every job to complete");
        await Wait.UntilAsync(() => JobSpans(spans, traceId).Count == 4, "four job spans in the request's trace (job 2 twice)");

        // Every attempt of the three traced jobs, the retry and the scheduled one included, is a child of the request.
        var jobs = JobSpans(spans, traceId);
        Assert.All(jobs, s => Assert.Equal(requestSpan, s.ParentSpanId));
        Assert.All(jobs, s => Assert.Equal(ActivityKind.Consumer, s.Kind));
        Assert.Equal([1, 1, 1, 2], jobs.Select(static s => Convert.ToInt32(s.GetTagItem("workqueue.job.attempt"), System.Globalization.CultureInfo.InvariantCulture)).Order());
        Assert.Equal([ids[0], ids[1], ids[1], ids[2]], jobs.Select(static s => (string)s.GetTagItem("workqueue.job.id")!).Order(StringComparer.Ordinal));

        // The untraced job's span starts a trace of its own.
        await Wait.UntilAsync(() => SpanOf(spans, untraced) is not null, "the untraced job's span");
        var own = SpanOf(spans, untraced)!;
        Assert.NotEqual(traceId, own.TraceId);
        Assert.Equal(default, own.ParentSpanId);
    }

    private static Activity? SpanOf(List<Activity> spans, string jobId)
    {
        lock (spans)
        {
            return spans.FirstOrDefault(s => s.Source.Name == WorkQueueTelemetry.ActivitySourceName && Equals(s.GetTagItem("workqueue.job.id"), jobId));
        }
    }

    private static List<Activity> JobSpans(List<Activity> spans, ActivityTraceId traceId)
    {
        lock (spans)
        {
            return [.. spans.Where(s => s.TraceId == traceId && s.Source.Name == WorkQueueTelemetry.ActivitySourceName)];
        }
    }
}
