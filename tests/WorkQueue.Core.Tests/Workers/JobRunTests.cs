using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Workers;

public sealed class JobRunTests
{
    [Fact]
    public async Task Begin_AfterAJobWhoseTokenWasHandedOut_NextJobOnTheThreadGetsItsOwnSource()
    {
        // One thread runs both jobs. The first is tracked (a scheduled job: a cancel by id may reach its source even
        // after it ended), so its source is never reused: the next job's token must come from another one, or that
        // late cancel would cancel it.
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 1; o.AutoScale.Enabled = false; });
        var first = new TaskCompletionSource<CancellationToken>(TaskCreationOptions.RunContinuationsAsynchronously);
        var second = new TaskCompletionSource<CancellationToken>(TaskCreationOptions.RunContinuationsAsynchronously);
        var third = new TaskCompletionSource<CancellationToken>(TaskCreationOptions.RunContinuationsAsynchronously);

        harness.Queue.Schedule(ct => first.TrySetResult(ct), TimeSpan.Zero);
        var tracked = await Wait.ForAsync(first.Task, "the tracked job");
        Assert.True(harness.Queue.TryEnqueue(ct => second.TrySetResult(ct)));
        var plain = await Wait.ForAsync(second.Task, "the plain job after it");
        Assert.True(harness.Queue.TryEnqueue(ct => third.TrySetResult(ct)));
        var next = await Wait.ForAsync(third.Task, "a second plain job");

        Assert.NotEqual(tracked, plain);
        Assert.NotEqual(tracked, next);
        Assert.False(plain.IsCancellationRequested);
        Assert.False(next.IsCancellationRequested);
    }
}
