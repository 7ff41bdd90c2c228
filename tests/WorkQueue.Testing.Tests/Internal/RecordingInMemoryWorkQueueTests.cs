using WorkQueue.Testing.Tests.TestSupport;

namespace WorkQueue.Testing.Tests.Internal;

/// <summary>The in-memory queue's own calls (delegates, handler instances, <c>TryEnqueue</c>, <c>Schedule</c>) in each mode.</summary>
public sealed class RecordingInMemoryWorkQueueTests
{
    [Fact]
    public async Task TryEnqueueAndSchedule_RecordMode_RecordedWithoutRunning()
    {
        await using var app = TestApp.Start(testing: o => o.Mode = WorkQueueTestMode.Record);
        var queue = app.InMemory();
        Action<CancellationToken> job = _ => app.Log.Ran("delegate");
        var handler = new ThrowingHandler();

        Assert.True(queue.TryEnqueue(job));
        Assert.True(queue.TryEnqueue<LogHandler, string>("typed"));
        string id = queue.Schedule(handler, "instance", TimeSpan.FromMinutes(1));
        await queue.EnqueueAsync(_ => ValueTask.CompletedTask);

        Assert.Empty(app.Log.Runs);
        Assert.Equal([null, typeof(LogHandler), typeof(ThrowingHandler), null], app.Harness.Enqueued.Select(j => j.HandlerType));
        Assert.Same(job, app.Harness.Enqueued[0].Payload);
        Assert.Equal((id, (TimeSpan?)TimeSpan.FromMinutes(1), (object?)"instance"), (app.Harness.Enqueued[2].JobId, app.Harness.Enqueued[2].Delay, app.Harness.Enqueued[2].Payload));
        Assert.True(queue.CancelScheduled(id));
        Assert.False(queue.CancelScheduled(id));
    }

    [Fact]
    public async Task TryEnqueue_InlineMode_RunsBeforeItReturns()
    {
        await using var app = TestApp.Start(testing: o => o.Mode = WorkQueueTestMode.Inline);
        var queue = app.InMemory("second");

        Assert.True(queue.TryEnqueue<SlowLogHandler, string>("typed, async"));
        Assert.True(queue.TryEnqueue(_ => app.Log.Ran("delegate")));
        queue.Schedule(async ct => { await Task.Yield(); app.Log.Ran("scheduled delegate"); }, TimeSpan.FromHours(1));

        Assert.Equal(["typed, async", "delegate", "scheduled delegate"], app.Log.Runs);
    }

    [Fact]
    public async Task TryEnqueue_RunModeQueueRefuses_RecordedAsNotCreated()
    {
        await using var app = TestApp.Start(queues: q => q.AddQueue("tiny", o =>
        {
            o.Capacity = 1;
            o.FullMode = QueueFullMode.Reject;
            o.MinWorkers = 1;
            o.MaxWorkers = 1;
        }));
        var queue = app.InMemory("tiny");

        // One running (held at the gate), one queued: the third is refused.
        Assert.True(queue.TryEnqueue<BlockingHandler, string>("running"));
        await Wait.UntilAsync(() => app.Services.GetQueueSnapshot("tiny").RunningJobs == 1, "the first job runs");
        Assert.True(queue.TryEnqueue<BlockingHandler, string>("queued"));
        Assert.False(queue.TryEnqueue<BlockingHandler, string>("refused"));

        Assert.Equal([true, true, false], app.Harness.Enqueued.Select(j => j.Created));
        app.Log.Gate.SetResult();
        await app.Harness.WaitUntilIdleAsync(Wait.Generous);
        Assert.Equal(["queued", "running"], app.Log.Runs.Order());
    }
}
