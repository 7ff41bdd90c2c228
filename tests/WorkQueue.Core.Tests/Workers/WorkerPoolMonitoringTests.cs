using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Testing;
using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Workers;

public sealed class WorkerPoolMonitoringTests
{
    [Fact]
    public async Task LongJob_PastStuckThreshold_ReportedInSnapshotAndLoggedOnce()
    {
        await using var harness = QueueHarness.Start(
            o => { o.MinWorkers = 1; o.MaxWorkers = 1; o.StuckJobThreshold = TimeSpan.FromMilliseconds(150); },
            addServices: s => s.AddFakeLogging());
        using var gate = new Gate();
        Assert.True(harness.Queue.TryEnqueue(gate.Block));
        await Wait.ForAsync(gate.EnteredAsync(1), "the job to start");

        await Wait.UntilAsync(() => harness.Control.GetSnapshot().StuckJobs.Count == 1, "the job is reported as stuck");
        var stuck = harness.Control.GetSnapshot().StuckJobs[0];
        Assert.Equal(("default", 1), (stuck.QueueName, stuck.Attempt));
        Assert.Contains(nameof(Gate.Block), stuck.Name);
        Assert.True(stuck.RunningFor >= TimeSpan.FromMilliseconds(150), $"reported after {stuck.RunningFor}");
        await Wait.UntilAsync(() => harness.Services.GetFakeLogCollector().GetSnapshot().Any(r => r.Id.Name == "JobStuck"), "the stuck job is logged");

        gate.Open();
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().StuckJobs.Count == 0, "the job returned");
        Assert.Single(harness.Services.GetFakeLogCollector().GetSnapshot(), r => r.Id.Name == "JobStuck");
    }

    [Fact]
    public async Task RetriedAttempt_BlocksAfterTheQueueWentIdle_LoggedAsStuck()
    {
        // The first attempt fails and the queue is idle while the retry waits; the retry reaches the pool from the retry
        // timer, not through the channel, and must arm the monitor (which logs stuck jobs) itself.
        await using var harness = QueueHarness.Start(
            o =>
        {
            o.MinWorkers = 1;
            o.MaxWorkers = 1;
            o.StuckJobThreshold = TimeSpan.FromMilliseconds(150);
            o.Retry.MaxAttempts = 2;
            o.Retry.BaseDelay = TimeSpan.FromMilliseconds(400);
            o.Retry.UseJitter = false;
        },
            addServices: s => s.AddFakeLogging());
        using var gate = new Gate();
        int attempts = 0;
        Assert.True(harness.Queue.TryEnqueue(ct =>
        {
            if (Interlocked.Increment(ref attempts) == 1)
            {
                throw new InvalidOperationException("first attempt fails");
            }

            gate.Block(ct);
        }));

        await Wait.ForAsync(gate.EnteredAsync(1), "the retried attempt to start");
        await Wait.UntilAsync(() => harness.Services.GetFakeLogCollector().GetSnapshot().Any(r => r.Id.Name == "JobStuck"), "the retried attempt is logged as stuck");
        Assert.Equal(2, harness.Control.GetSnapshot().StuckJobs[0].Attempt);
        gate.Open();
    }

    [Fact]
    public async Task JobIgnoringItsToken_PastJobTimeout_ReportedAsStuck()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 1; o.JobTimeout = TimeSpan.FromMilliseconds(100); });
        using var gate = new Gate();
        Assert.True(harness.Queue.TryEnqueue(gate.Block));

        await Wait.UntilAsync(() => harness.Control.GetSnapshot().StuckJobs.Count == 1, "the job that outlived its timeout is reported");
        Assert.Contains("JobTimeout", harness.Control.GetSnapshot().StuckJobs[0].Reason);
        gate.Open();
    }

    [Fact]
    public async Task GetSnapshot_WhileStuckJobsEndAndTheirThreadsMoveOn_NeverThrows()
    {
        // Every job outlives the 1 ms threshold and ends a moment later: the snapshot reads runs that other threads are
        // ending and reusing. It must report what it can and never throw (it backs the admin endpoints and the dashboard).
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 2; o.MaxWorkers = 2; o.Capacity = 100_000; o.StuckJobThreshold = TimeSpan.FromMilliseconds(1); });
        const int jobs = 2_000;
        int done = 0;
        for (int i = 0; i < jobs; i++)
        {
            Assert.True(harness.Queue.TryEnqueue(_ =>
            {
                var until = System.Diagnostics.Stopwatch.GetTimestamp() + (System.Diagnostics.Stopwatch.Frequency / 1000 * 2);
                while (System.Diagnostics.Stopwatch.GetTimestamp() < until)
                {
                    Thread.SpinWait(20);
                }

                Interlocked.Increment(ref done);
            }));
        }

        int snapshots = 0;
        while (Volatile.Read(ref done) < jobs)
        {
            _ = harness.Control.GetSnapshot();
            snapshots++;
        }

        Assert.True(snapshots > 0);
        Assert.Equal(jobs, harness.Control.GetSnapshot().Totals.Succeeded);
    }
}
