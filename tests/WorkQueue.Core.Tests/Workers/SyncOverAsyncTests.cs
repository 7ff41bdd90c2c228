using System.Collections.Concurrent;
using System.Diagnostics;
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
    private static readonly TimeSpan BulkWait = TimeSpan.FromSeconds(120);

    public enum AwaitShape
    {
        Direct,
        ThroughClientMethods,
        WorkBeforeAwait,
    }

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

    [Theory]
    [InlineData(AwaitShape.Direct)]
    [InlineData(AwaitShape.ThroughClientMethods)]
    [InlineData(AwaitShape.WorkBeforeAwait)]
    public async Task AsyncJobs_AwaitCompletedByAnotherThreadAtOnce_NeverReportedAsSyncOverAsync(AwaitShape shape)
    {
        // Like a Redis reply on StackExchange.Redis's reader thread: the job's only await is completed by another thread
        // within microseconds, often while the job's thread is still inside the job's synchronous part (returning from
        // it, or still working before it awaits). The job never blocks its thread, so nothing may be counted or logged,
        // and its continuations stay on the queue's threads.
        const int Jobs = 20_000;
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 3; o.MaxWorkers = 3; o.AutoScale.Enabled = false; }, addServices: s => s.AddFakeLogging());
        using var collector = new MetricCollector<long>(harness.Services.GetRequiredService<IMeterFactory>(), WorkQueueMetrics.MeterName, "workqueue.job.sync_over_async");
        using var completer = new Completer();
        var done = new CountdownSignal(Jobs);
        int onThreadPool = 0;

        for (int i = 0; i < Jobs; i++)
        {
            await harness.Queue.EnqueueAsync(async ct =>
            {
                switch (shape)
                {
                    case AwaitShape.Direct:
                        var reply = new TaskCompletionSource();
                        completer.Complete(reply);
                        await reply.Task;
                        break;
                    case AwaitShape.ThroughClientMethods:
                        await CallAsync(completer, depth: 12);
                        break;
                    default:
                        var call = CallAsync(completer, depth: 1);
                        Thread.SpinWait(2000);
                        await call;
                        break;
                }

                if (Thread.CurrentThread.IsThreadPoolThread)
                {
                    Interlocked.Increment(ref onThreadPool);
                }

                done.Signal();
            });
        }

        // Thousands of jobs, each waiting on another thread's completion: far longer than one signal's wait on a machine
        // whose cores other test projects share. The message tells a stall (most remaining) from slowness (a few).
        var finished = await Task.WhenAny(done.Task, Task.Delay(BulkWait));
        Assert.True(finished == done.Task, $"{done.Remaining} of {Jobs} jobs had not completed after {BulkWait.TotalSeconds} s.");
        // The sync-part detection only: the blocked-threads one (every thread in job code and no continuation run for a
        // whole 100 ms tick) can fire when the machine starves all three threads of CPU.
        int counted = collector.GetMeasurementSnapshot().Count(m => m.Tags[WorkQueueMetrics.DetectionTag] as string == WorkQueueMetrics.SyncPartDetection);
        Assert.True(counted == 0, $"{counted} of {Jobs} jobs that never block were counted as sync-over-async");
        Assert.DoesNotContain(harness.Services.GetFakeLogCollector().GetSnapshot(), r => r.Id.Name == "SyncOverAsync");
        Assert.Equal(0, Volatile.Read(ref onThreadPool));
    }

    [Fact]
    public async Task SyncJobs_BlockOnCallsCompletedByAnotherThreadAtOnce_EachCounted()
    {
        // The true positive beside the test above: the reply comes within microseconds of the job blocking on the call,
        // often while its thread still spins in GetResult before it waits. Every job is counted once and completes.
        const int Jobs = 1_000;
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 3; o.MaxWorkers = 3; o.AutoScale.Enabled = false; }, addServices: s => s.AddFakeLogging());
        using var collector = new MetricCollector<long>(harness.Services.GetRequiredService<IMeterFactory>(), WorkQueueMetrics.MeterName, "workqueue.job.sync_over_async");
        using var completer = new Completer();
        var done = new CountdownSignal(Jobs);

        for (int i = 0; i < Jobs; i++)
        {
            await harness.Queue.EnqueueAsync(ct =>
            {
                // Handed to the completer once the call awaits it, so its continuation is always posted to the job.
                var reply = new TaskCompletionSource();
                var call = AwaitAsync(reply.Task);
                completer.Complete(reply);
                call.GetAwaiter().GetResult();
                done.Signal();
            });
        }

        // Thousands of jobs, each waiting on another thread's completion: far longer than one signal's wait on a machine
        // whose cores other test projects share. The message tells a stall (most remaining) from slowness (a few).
        var finished = await Task.WhenAny(done.Task, Task.Delay(BulkWait));
        Assert.True(finished == done.Task, $"{done.Remaining} of {Jobs} jobs had not completed after {BulkWait.TotalSeconds} s.");
        Assert.Equal(Jobs, collector.GetMeasurementSnapshot().Count(m => m.Tags[WorkQueueMetrics.DetectionTag] as string == WorkQueueMetrics.SyncPartDetection));
        Assert.Single(harness.Services.GetFakeLogCollector().GetSnapshot(), r => r.Id.Name == "SyncOverAsync");
    }

    [Fact]
    public async Task SyncJob_SpinsWithoutWaitingUntilItsOwnCallCompletes_Completes()
    {
        // A job that spins (its thread never waits) until a call whose continuation is posted to it completes: the held
        // continuation is let go after HeldContinuations.HoldLimit, so the job ends, even with a single thread.
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 1; o.AutoScale.Enabled = false; });
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        Assert.True(harness.Queue.TryEnqueue(ct =>
        {
            var call = LegacyAsync();
            while (!call.IsCompleted)
            {
                Thread.SpinWait(20);
            }

            done.SetResult();
        }));

        await Wait.ForAsync(done.Task, "the spinning job");
    }

    /// <summary>A legacy SDK method: async all the way down, without ConfigureAwait(false).</summary>
    private static async Task<int> LegacyAsync()
    {
        await Task.Delay(10);
        return 42;
    }

    /// <summary>A client library's call, a few async methods deep, whose reply another thread delivers at once.</summary>
    private static async Task CallAsync(Completer completer, int depth)
    {
        if (depth > 1)
        {
            await CallAsync(completer, depth - 1);
            return;
        }

        var reply = new TaskCompletionSource();
        completer.Complete(reply);
        await reply.Task;
    }

    /// <summary>Legacy async code: awaits without ConfigureAwait(false), so its continuation is posted to the job.</summary>
    private static async Task AwaitAsync(Task task) => await task;

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

    /// <summary>
    /// A dedicated thread that completes each task handed to it within a few microseconds (a random delay, so that the
    /// completions fall before, during and after the job's return from its synchronous part), as a client library's
    /// reader thread delivers replies.
    /// </summary>
    private sealed class Completer : IDisposable
    {
        private static readonly long MaxDelay = Stopwatch.Frequency * 4 / 1_000_000;
        private readonly ConcurrentQueue<(TaskCompletionSource Reply, long Due)> _pending = new();
        private readonly Random _random = new(28);
        private readonly Thread _thread;
        private volatile bool _stopped;

        public Completer()
        {
            _thread = new Thread(Run) { IsBackground = true, Name = "Completer" };
            _thread.Start();
        }

        public void Complete(TaskCompletionSource reply) => _pending.Enqueue((reply, Stopwatch.GetTimestamp()));

        public void Dispose()
        {
            _stopped = true;
            _thread.Join();
        }

        private void Run()
        {
            var idle = default(SpinWait);
            while (!_stopped)
            {
                if (_pending.TryDequeue(out var pending))
                {
                    long due = pending.Due + _random.NextInt64(MaxDelay + 1);
                    while (Stopwatch.GetTimestamp() < due)
                    {
                        Thread.SpinWait(1);
                    }

                    // Continuations run inline here: the job's is posted to its context from this thread.
                    pending.Reply.SetResult();
                    idle = default;
                }
                else
                {
                    idle.SpinOnce(sleep1Threshold: -1);
                }
            }
        }
    }

    private sealed class LegacyHandler(TaskCompletionSource<int> done) : IJobHandler<int>
    {
        public ValueTask ExecuteAsync(int payload, CancellationToken cancellationToken)
        {
            done.SetResult(LegacyAsync().GetAwaiter().GetResult() + payload);
            return default;
        }
    }
}
