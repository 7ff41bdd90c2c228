using System.Collections.Concurrent;
using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Queueing;

public sealed class DefaultWorkQueueShutdownTests
{
    [Fact]
    public async Task StopAsync_EnoughTime_DrainsQueuedAndRunningJobs()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 2; o.MaxWorkers = 2; });
        using var gate = new Gate();
        int ran = 0;
        for (int i = 0; i < 50; i++)
        {
            Assert.True(harness.Queue.TryEnqueue(ct => { gate.Block(ct); Interlocked.Increment(ref ran); }));
        }

        await Wait.ForAsync(gate.EnteredAsync(2), "two running jobs");
        var stopping = harness.Control.StopAsync(Wait.Generous);
        Assert.False(harness.Queue.TryEnqueue(_ => { }));
        gate.Open();

        var report = await Wait.ForAsync(stopping, "the drain");
        Assert.True(report.Drained);
        Assert.Empty(report.Abandoned);
        Assert.Equal(50, ran);
        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((50L, 50L, 0L), (totals.Enqueued, totals.Succeeded, totals.Unfinished));
        Assert.Equal(0, harness.Control.GetSnapshot().Workers);
    }

    [Fact]
    public async Task StopAsync_FullQueuePastDeadline_ReportsEveryJobThatDidNotRun()
    {
        await using var harness = QueueHarness.Start(o =>
        {
            o.MinWorkers = 1;
            o.MaxWorkers = 1;
            o.Capacity = 20;
            o.AutoScale.Enabled = false;
            o.ShutdownGracePeriod = TimeSpan.FromSeconds(10);
        });
        using var gate = new Gate();
        var handler = new GatedHandler(gate);
        Assert.True(harness.Queue.TryEnqueue(handler, 0));
        await Wait.ForAsync(gate.EnteredAsync(1), "the running job");
        for (int i = 1; i <= 20; i++)
        {
            Assert.True(harness.Queue.TryEnqueue(handler, i));
        }

        Assert.False(harness.Queue.TryEnqueue(handler, 99));

        var report = await Wait.ForAsync(harness.Control.StopAsync(TimeSpan.FromMilliseconds(100)), "the stop");

        Assert.False(report.Drained);
        Assert.Equal(21, report.Abandoned.Count);
        var running = Assert.Single(report.Abandoned, a => a.Reason == AbandonReason.Canceled);
        Assert.Equal(0, running.Job.Payload);
        Assert.Equal(
            Enumerable.Range(1, 20),
            report.Abandoned.Where(a => a.Reason == AbandonReason.NotStarted).Select(a => (int)a.Job.Payload!).Order());
        AssertAccountingAddsUp(harness.Control.GetSnapshot().Totals, expectedEnqueued: 21);
        var ex = await Assert.ThrowsAsync<JobRejectedException>(async () => await harness.Queue.EnqueueAsync(handler, 100));
        Assert.Equal(RejectionReason.QueueStopped, ex.Reason);
    }

    [Fact]
    public async Task StopAsync_JobIgnoresCancellation_ReportedStillRunningAndNotCountedTwice()
    {
        await using var harness = QueueHarness.Start(o =>
        {
            o.MinWorkers = 1;
            o.MaxWorkers = 1;
            o.ShutdownGracePeriod = TimeSpan.FromMilliseconds(100);
        });
        using var gate = new Gate();
        Assert.True(harness.Queue.TryEnqueue(gate.Block));
        await Wait.ForAsync(gate.EnteredAsync(1), "the running job");

        var report = await Wait.ForAsync(harness.Control.StopAsync(TimeSpan.FromMilliseconds(50)), "the stop");

        Assert.Equal(AbandonReason.StillRunning, Assert.Single(report.Abandoned).Reason);
        gate.Open();
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().BusyWorkers == 0, "the ignored job returns");
        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((1L, 0L, 1L), (totals.Abandoned, totals.Succeeded, totals.Enqueued));
    }

    [Fact]
    public async Task StopAsync_RetryPendingAtDeadline_ReportedAsRetryPending()
    {
        var failed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var harness = QueueHarness.Start(o =>
        {
            o.Retry.MaxAttempts = 3;
            o.Retry.BaseDelay = TimeSpan.FromMinutes(5);
            o.Retry.MaxDelay = TimeSpan.FromMinutes(5);
        });
        Assert.True(harness.Queue.TryEnqueue(_ => { failed.TrySetResult(); throw new InvalidOperationException("fails"); }));
        await Wait.ForAsync(failed.Task, "the first attempt");
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Retried == 1, "the retry is scheduled");

        var report = await Wait.ForAsync(harness.Control.StopAsync(TimeSpan.FromMilliseconds(50)), "the stop");

        var abandoned = Assert.Single(report.Abandoned);
        Assert.Equal(AbandonReason.RetryPending, abandoned.Reason);
        AssertAccountingAddsUp(harness.Control.GetSnapshot().Totals, expectedEnqueued: 1);
    }

    [Fact]
    public async Task StopAsync_RetryDuringDrain_RunsBeforeStopCompletes()
    {
        int attempts = 0;
        await using var harness = QueueHarness.Start(o => { o.Retry.MaxAttempts = 2; o.Retry.BaseDelay = TimeSpan.FromMilliseconds(50); });
        var firstFailed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(harness.Queue.TryEnqueue(_ =>
        {
            if (Interlocked.Increment(ref attempts) == 1)
            {
                firstFailed.SetResult();
                throw new InvalidOperationException("transient");
            }
        }));
        await Wait.ForAsync(firstFailed.Task, "the first attempt");

        var report = await Wait.ForAsync(harness.Control.StopAsync(Wait.Generous), "the drain");

        Assert.True(report.Drained);
        Assert.Equal(2, attempts);
        Assert.Equal(1, harness.Control.GetSnapshot().Totals.Succeeded);
    }

    [Fact]
    public async Task StopAsync_CalledTwice_ReturnsTheSameReport()
    {
        await using var harness = QueueHarness.Start();

        var first = harness.Control.StopAsync(TimeSpan.FromSeconds(5));
        var second = harness.Control.StopAsync(TimeSpan.FromSeconds(1));

        Assert.Same(await first, await second);
    }

    [Theory]
    [InlineData(-1.0)]
    [InlineData(50.0 * 24 * 60 * 60)]
    public async Task StopAsync_TimeoutOutOfRange_ThrowsNamingDrainTimeoutAndKeepsAccepting(double seconds)
    {
        await using var harness = QueueHarness.Start();

        var ex = Assert.Throws<ArgumentOutOfRangeException>(() => { _ = harness.Control.StopAsync(TimeSpan.FromSeconds(seconds)); });

        Assert.Equal("drainTimeout", ex.ParamName);
        Assert.True(harness.Control.GetSnapshot().IsAccepting);
        Assert.True(harness.Queue.TryEnqueue(_ => { }));
    }

    [Fact]
    public async Task StopAsync_EnqueueWaitingForSpaceWhenAbandoned_IsRejectedNotLost()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 1; o.Capacity = 1; o.ShutdownGracePeriod = TimeSpan.FromMilliseconds(100); });
        using var gate = new Gate();
        Assert.True(harness.Queue.TryEnqueue(gate.BlockCancellable));
        await Wait.ForAsync(gate.EnteredAsync(1), "the running job");
        Assert.True(harness.Queue.TryEnqueue(gate.BlockCancellable));
        var waiting = harness.Queue.EnqueueAsync(gate.BlockCancellable).AsTask();

        var report = await Wait.ForAsync(harness.Control.StopAsync(TimeSpan.FromMilliseconds(50)), "the stop");

        var ex = await Assert.ThrowsAsync<JobRejectedException>(() => waiting);
        Assert.Equal(RejectionReason.QueueStopped, ex.Reason);
        Assert.Equal(2, report.Abandoned.Count);
        AssertAccountingAddsUp(harness.Control.GetSnapshot().Totals, expectedEnqueued: 2);
    }

    internal static void AssertAccountingAddsUp(WorkQueueTotals totals, long expectedEnqueued)
    {
        Assert.Equal(expectedEnqueued, totals.Enqueued);
        Assert.Equal(0, totals.Unfinished);
        Assert.Equal(totals.Enqueued, totals.Succeeded + totals.DeadLettered + totals.Dropped + totals.Abandoned);
    }

    private sealed class GatedHandler(Gate gate) : IJobHandler<int>
    {
        public ValueTask ExecuteAsync(int payload, CancellationToken cancellationToken)
        {
            gate.BlockCancellable(cancellationToken);
            return default;
        }
    }
}
