using System.Collections.Concurrent;
using System.Diagnostics;
using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Telemetry;

public sealed class WorkQueueTracingTests
{
    [Fact]
    public async Task Job_EnqueuedUnderAnActivity_RunsInAChildSpanWithQueueAttemptAndOutcome()
    {
        var stopped = new ConcurrentQueue<Activity>();
        using var listener = Listen(stopped);
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 1; o.Retry.MaxAttempts = 2; o.Retry.BaseDelay = TimeSpan.Zero; });
        using var request = new Activity("test request").Start();
        var seen = new TaskCompletionSource<(string? ParentSpan, string? TraceId)>(TaskCreationOptions.RunContinuationsAsynchronously);
        int attempts = 0;

        Assert.True(harness.Queue.TryEnqueue(async _ =>
        {
            await Task.Yield();
            if (Interlocked.Increment(ref attempts) == 1)
            {
                throw new InvalidOperationException("first attempt fails");
            }

            seen.SetResult((Activity.Current?.ParentSpanId.ToHexString(), Activity.Current?.TraceId.ToHexString()));
        }));
        request.Stop();

        var (parentSpan, traceId) = await Wait.ForAsync(seen.Task, "the second attempt");
        Assert.Equal(request.SpanId.ToHexString(), parentSpan);
        Assert.Equal(request.TraceId.ToHexString(), traceId);
        await Wait.UntilAsync(() => stopped.Count(a => a.TraceId == request.TraceId) == 2, "both attempts' spans end");
        var spans = stopped.Where(a => a.TraceId == request.TraceId).OrderBy(a => a.GetTagItem("workqueue.job.attempt")).ToList();
        Assert.All(spans, s => Assert.Equal(("default process", ActivityKind.Consumer, "default"), (s.DisplayName, s.Kind, s.GetTagItem("workqueue.queue"))));
        Assert.Equal([1, 2], spans.Select(s => (int)s.GetTagItem("workqueue.job.attempt")!));
        Assert.Equal(["failure", "success"], spans.Select(s => (string)s.GetTagItem("workqueue.job.outcome")!));
        Assert.Equal(ActivityStatusCode.Error, spans[0].Status);
        Assert.Contains(spans[0].Events, e => e.Name == "exception");
        Assert.Equal(ActivityStatusCode.Unset, spans[1].Status);
    }

    [Fact]
    public async Task Job_EnqueuedWithoutAnActivity_StartsItsOwnTrace()
    {
        var stopped = new ConcurrentQueue<Activity>();
        using var listener = Listen(stopped);
        await using var harness = QueueHarness.Start();
        Activity.Current = null;
        var seen = new TaskCompletionSource<Activity?>(TaskCreationOptions.RunContinuationsAsynchronously);

        Assert.True(harness.Queue.TryEnqueue(_ => seen.SetResult(Activity.Current)));

        var span = await Wait.ForAsync(seen.Task, "the job");
        Assert.NotNull(span);
        Assert.Null(span.Parent);
        Assert.Equal(default, span.ParentSpanId);
    }

    private static ActivityListener Listen(ConcurrentQueue<Activity> stopped)
    {
        var listener = new ActivityListener
        {
            ShouldListenTo = s => s.Name == WorkQueueTelemetry.ActivitySourceName,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
            ActivityStopped = stopped.Enqueue,
        };
        ActivitySource.AddActivityListener(listener);
        return listener;
    }
}
