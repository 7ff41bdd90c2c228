using System.Collections.Concurrent;
using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Workers;

/// <summary>Async jobs hold no thread while they await: concurrency is its own limit, not the thread count.</summary>
public sealed class AsyncConcurrencyTests
{
    [Fact]
    public async Task MaxConcurrency_AsyncJobsAwaiting_RunManyAtOnceOnTwoThreadsAndResumeOnThem()
    {
        const int Jobs = 64;
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 2; o.MaxWorkers = 2; o.MaxConcurrency = Jobs; o.AutoScale.Enabled = false; });
        var io = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var started = new CountdownSignal(Jobs);
        var done = new CountdownSignal(Jobs);
        var resumedOn = new ConcurrentBag<(bool Pool, string? Name)>();

        for (int i = 0; i < Jobs; i++)
        {
            Assert.True(harness.Queue.TryEnqueue(async _ =>
            {
                started.Signal();
                await io.Task;
                resumedOn.Add((Thread.CurrentThread.IsThreadPoolThread, Thread.CurrentThread.Name));
                await Task.Yield();
                resumedOn.Add((Thread.CurrentThread.IsThreadPoolThread, Thread.CurrentThread.Name));
                done.Signal();
            }));
        }

        await Wait.ForAsync(started.Task, "all 64 jobs running at once on two threads");
        var snapshot = harness.Control.GetSnapshot();
        Assert.Equal((Jobs, 2, Jobs), (snapshot.RunningJobs, snapshot.Workers, snapshot.MaxConcurrency));

        io.SetResult();
        await Wait.ForAsync(done.Task, "every job after its await");
        Assert.Equal(Jobs * 2, resumedOn.Count);
        Assert.All(resumedOn, r => Assert.False(r.Pool, "a continuation ran on the thread pool"));
        Assert.All(resumedOn, r => Assert.StartsWith("WorkQueue:default#", r.Name));
    }

    [Fact]
    public async Task DefaultConcurrency_AsyncJobsAwaiting_OneJobPerThreadAsBefore()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 2; o.MaxWorkers = 2; o.AutoScale.Enabled = false; });
        var io = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var started = new CountdownSignal(2);
        var done = new CountdownSignal(4);
        int running = 0, maxRunning = 0;

        for (int i = 0; i < 4; i++)
        {
            Assert.True(harness.Queue.TryEnqueue(async _ =>
            {
                int now = Interlocked.Increment(ref running);
                InterlockedMax(ref maxRunning, now);
                started.Signal();
                await io.Task;
                Interlocked.Decrement(ref running);
                done.Signal();
            }));
        }

        await Wait.ForAsync(started.Task, "two jobs running");
        var snapshot = harness.Control.GetSnapshot();
        Assert.Equal((2, 2, 2), (snapshot.RunningJobs, snapshot.Depth, snapshot.MaxConcurrency));

        io.SetResult();
        await Wait.ForAsync(done.Task, "all four jobs");
        Assert.Equal(2, maxRunning);
    }

    [Fact]
    public async Task Continuation_ItsFirstThreadBlockedByAnotherJob_RunsOnAnotherQueueThread()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 2; o.MaxWorkers = 2; o.MaxConcurrency = 4; o.AutoScale.Enabled = false; });
        using var gate = new Gate();
        var io = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var asyncStarted = new TaskCompletionSource<string?>(TaskCreationOptions.RunContinuationsAsynchronously);
        var resumed = new TaskCompletionSource<string?>(TaskCreationOptions.RunContinuationsAsynchronously);

        Assert.True(harness.Queue.TryEnqueue(async _ =>
        {
            asyncStarted.SetResult(Thread.CurrentThread.Name);
            await io.Task;
            resumed.SetResult(Thread.CurrentThread.Name);
        }));
        await Wait.ForAsync(asyncStarted.Task, "the async job to start");
        Assert.True(harness.Queue.TryEnqueue(gate.Block));
        Assert.True(harness.Queue.TryEnqueue(gate.Block));
        await Wait.ForAsync(gate.EnteredAsync(2), "both threads blocked by other jobs");
        gate.Open();
        io.SetResult();

        Assert.StartsWith("WorkQueue:default#", await Wait.ForAsync(resumed.Task, "the continuation"));
    }

    [Fact]
    public async Task Continuation_EveryOtherThreadBlocked_StillRunsWhileTheBlockingJobsHold()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 2; o.MaxWorkers = 2; o.MaxConcurrency = 2; o.AutoScale.Enabled = false; });
        using var gate = new Gate();
        var io = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var asyncStarted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var resumed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        Assert.True(harness.Queue.TryEnqueue(async _ =>
        {
            asyncStarted.SetResult();
            await io.Task;
            resumed.SetResult();
        }));
        await Wait.ForAsync(asyncStarted.Task, "the async job to start");
        Assert.True(harness.Queue.TryEnqueue(gate.Block));
        await Wait.ForAsync(gate.EnteredAsync(1), "one thread blocked by a job");

        io.SetResult();

        await Wait.ForAsync(resumed.Task, "the continuation on the free thread while the other is blocked");
        Assert.Equal(1, gate.Entered);
        gate.Open();
    }

    private static void InterlockedMax(ref int target, int value)
    {
        int current;
        while ((current = Volatile.Read(ref target)) < value && Interlocked.CompareExchange(ref target, value, current) != current)
        {
        }
    }
}
