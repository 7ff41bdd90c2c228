using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Time.Testing;
using WorkQueue.Core.Tests.Queueing;
using WorkQueue.Core.Tests.TestSupport;
using WorkQueue.Internal;

namespace WorkQueue.Core.Tests.Execution;

public sealed class JobRunnerTests
{
    [Fact]
    public async Task OnFinished_EveryLogCallThrows_FailingJobIsStillRetriedDeadLetteredAndCounted()
    {
        var logs = new ThrowingLoggerProvider();
        await using var harness = QueueHarness.Start(
            o =>
            {
                o.MinWorkers = 1;
                o.MaxWorkers = 1;
                o.Retry.MaxAttempts = 2;
                o.Retry.BaseDelay = TimeSpan.FromMilliseconds(10);
                o.Retry.ShouldRetry = ex => ex.Message == "retry me" ? true : throw new InvalidOperationException("the predicate failed");
            },
            addServices: s => s.AddLogging(b => b.AddProvider(logs)));

        Assert.True(harness.Queue.TryEnqueue(_ => throw new InvalidOperationException("retry me")));
        Assert.True(harness.Queue.TryEnqueue(_ => throw new InvalidOperationException("the predicate throws for me")));

        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.DeadLettered == 2, "both jobs are dead-lettered");
        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((1L, 3L, 0L), (totals.Retried, totals.Failed, totals.Unfinished));
        Assert.True(logs.Throws > 0, "the logger was never called");
        DefaultWorkQueueShutdownTests.AssertAccountingAddsUp(totals, expectedEnqueued: 2);

        // The thread survived it all.
        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(harness.Queue.TryEnqueue(_ => ran.SetResult()));
        await Wait.ForAsync(ran.Task, "a later job");
    }

    [Fact]
    public async Task AutoScaler_LoggerThrowsOnTheTimerThread_ScalingCarriesOn()
    {
        var time = new FakeTimeProvider();
        var logs = new ThrowingLoggerProvider();
        await using var harness = QueueHarness.Start(
            o =>
            {
                o.MinWorkers = 1;
                o.MaxWorkers = 3;
                o.AutoScale.TargetQueueWait = TimeSpan.FromMilliseconds(10);
                o.AutoScale.SampleInterval = TimeSpan.FromMilliseconds(100);
                o.AutoScale.ScaleUpCooldown = TimeSpan.Zero;
            },
            addServices: s => s.AddLogging(b => b.AddProvider(logs)).AddSingleton(new WorkQueueEnvironment(time, () => 0.5)));
        using var gate = new Gate();
        Assert.True(harness.Queue.TryEnqueue(gate.Block));
        await Wait.ForAsync(gate.EnteredAsync(1), "the only thread to be busy");
        Assert.True(harness.Queue.TryEnqueue(gate.Block));
        Assert.True(harness.Queue.TryEnqueue(gate.Block));

        // Each sample logs the scale-up, and the logger throws: on the timer thread, where nothing may escape.
        time.Advance(TimeSpan.FromMilliseconds(100));
        await Wait.ForAsync(gate.EnteredAsync(2), "the first added thread");
        time.Advance(TimeSpan.FromMilliseconds(100));

        await Wait.ForAsync(gate.EnteredAsync(3), "the second added thread");
        gate.Open();
    }
}
