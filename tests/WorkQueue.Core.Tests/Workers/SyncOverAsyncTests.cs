using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.Metrics.Testing;
using Microsoft.Extensions.Logging.Testing;
using WorkQueue.Core.Tests.TestSupport;
using WorkQueue.Telemetry;

namespace WorkQueue.Core.Tests.Workers;

/// <summary>
/// Legacy code that blocks on async code (<c>.Result</c>, <c>.Wait()</c>, <c>GetAwaiter().GetResult()</c>) whose awaits
/// do not use <c>ConfigureAwait(false)</c>: what old SDKs do, and what services move into WorkQueue.
/// </summary>
public sealed class SyncOverAsyncTests
{
    public enum BlockingStyle
    {
        Result,
        Wait,
        GetResult,
    }

    [Theory]
    [InlineData(BlockingStyle.Result)]
    [InlineData(BlockingStyle.Wait)]
    [InlineData(BlockingStyle.GetResult)]
    public async Task SyncJob_BlocksOnLegacyAsyncWithOneThread_CompletesAndTheNextJobRuns(BlockingStyle style)
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 1; });
        var first = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        var second = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        Assert.True(harness.Queue.TryEnqueue(_ => first.SetResult(Block(LegacyAsync(), style))));
        Assert.True(harness.Queue.TryEnqueue(_ => second.SetResult()));

        Assert.Equal(42, await Wait.ForAsync(first.Task, "the job blocking on legacy async code"));
        await Wait.ForAsync(second.Task, "the next job on the same thread");
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().RunningJobs == 0, "both jobs have ended");
        Assert.Equal(2, harness.Control.GetSnapshot().Totals.Succeeded);
    }

    [Fact]
    public async Task SyncHandler_BlocksOnLegacyAsyncWithOneThread_Completes()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 1; });
        var done = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);

        Assert.True(harness.Queue.TryEnqueue(new LegacyHandler(done), 1));

        Assert.Equal(43, await Wait.ForAsync(done.Task, "the handler blocking on legacy async code"));
    }

    [Fact]
    public async Task AsyncJob_YieldsThenBlocksOnLegacyAsync_ContinuationRunsOnAnAddedQueueThread()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 2; o.AutoScale.Enabled = false; });
        using var collector = new MetricCollector<long>(harness.Services.GetRequiredService<IMeterFactory>(), WorkQueueMetrics.MeterName, "workqueue.job.sync_over_async");
        var done = new TaskCompletionSource<(int Value, bool OnPool)>(TaskCreationOptions.RunContinuationsAsynchronously);

        Assert.True(harness.Queue.TryEnqueue(async _ =>
        {
            await Task.Yield();
            int value = LegacyAsync().Result;
            done.SetResult((value, Thread.CurrentThread.IsThreadPoolThread));
        }));

        var (result, onPool) = await Wait.ForAsync(done.Task, "the async job blocking on legacy async code");
        Assert.Equal(42, result);
        Assert.False(onPool, "the job's own code ran on the thread pool");
        Assert.Contains(collector.GetMeasurementSnapshot(), m => m.Tags[WorkQueueMetrics.DetectionTag] as string == WorkQueueMetrics.BlockedThreadsDetection);
    }

    [Fact]
    public async Task AsyncJob_BlocksWithEveryThreadTakenAtMaxWorkers_ReportedAsStuck()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 1; o.ShutdownGracePeriod = TimeSpan.FromMilliseconds(100); });

        Assert.True(harness.Queue.TryEnqueue(async ct =>
        {
            await Task.Yield();
            _ = LegacyAsync().Result;
        }));

        await Wait.UntilAsync(() => harness.Control.GetSnapshot().StuckJobs.Count == 1, "the deadlocked job is reported as stuck");
        var stuck = harness.Control.GetSnapshot().StuckJobs[0];
        Assert.Equal("default", stuck.QueueName);
        Assert.Contains("every thread", stuck.Reason);
        Assert.Contains(nameof(AsyncJob_BlocksWithEveryThreadTakenAtMaxWorkers_ReportedAsStuck), stuck.Name);

        // The shutdown gives up on it and reports it; the continuation it waits for then runs on the thread pool.
        var report = await Wait.ForAsync(harness.Control.StopAsync(TimeSpan.FromMilliseconds(50)), "the stop");
        Assert.Equal(AbandonReason.StillRunning, Assert.Single(report.Abandoned).Reason);
    }

    [Fact]
    public async Task SyncJobs_ManyOfOneType_LoggedOnceAndCountedEachTime()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 1; }, addServices: s => s.AddFakeLogging());
        using var collector = new MetricCollector<long>(harness.Services.GetRequiredService<IMeterFactory>(), WorkQueueMetrics.MeterName, "workqueue.job.sync_over_async");
        var done = new CountdownSignal(5);

        for (int i = 0; i < 5; i++)
        {
            Assert.True(harness.Queue.TryEnqueue(LegacySyncJob(done)));
        }

        await Wait.ForAsync(done.Task, "five jobs blocking on legacy async code");
        var logs = harness.Services.GetFakeLogCollector().GetSnapshot().Where(r => r.Id.Name == "SyncOverAsync").ToList();
        Assert.Single(logs);
        Assert.Contains(nameof(LegacySyncJob), logs[0].Message);
        Assert.Equal(5, collector.GetMeasurementSnapshot().Count(m => m.Tags[WorkQueueMetrics.DetectionTag] as string == WorkQueueMetrics.SyncPartDetection));
    }

    /// <summary>A legacy SDK method: async all the way down, without ConfigureAwait(false).</summary>
    private static async Task<int> LegacyAsync()
    {
        await Task.Delay(10);
        return 42;
    }

    private static int Block(Task<int> task, BlockingStyle style)
    {
        switch (style)
        {
            case BlockingStyle.Wait:
                task.Wait();
                return task.Result;
            case BlockingStyle.GetResult:
                return task.GetAwaiter().GetResult();
            default:
                return task.Result;
        }
    }

    private static Action<CancellationToken> LegacySyncJob(CountdownSignal done) => ct =>
    {
        _ = LegacyAsync().Result;
        done.Signal();
    };

    private sealed class LegacyHandler(TaskCompletionSource<int> done) : IJobHandler<int>
    {
        public ValueTask ExecuteAsync(int payload, CancellationToken cancellationToken)
        {
            done.SetResult(LegacyAsync().GetAwaiter().GetResult() + payload);
            return default;
        }
    }
}
