using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Workers;

/// <summary>
/// The reason the library exists: blocking background work must not starve the CLR thread pool. These tests cap the
/// process-wide pool, so they run alone.
/// </summary>
[Collection(ThreadPoolCapCollection.Name)]
public sealed class WorkerIsolationTests
{
    private const int BlockingJobs = 24;

    [Fact]
    public async Task BlockingJobs_PoolCapped_ThreadPoolWorkStillCompletes()
    {
        using var cap = ThreadPoolCap.Apply(Math.Max(4, Environment.ProcessorCount));
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = BlockingJobs; o.MaxWorkers = BlockingJobs; });
        using var gate = new Gate();

        for (int i = 0; i < BlockingJobs; i++)
        {
            Assert.True(harness.Queue.TryEnqueue(gate.Block));
        }

        await Wait.ForAsync(gate.EnteredAsync(BlockingJobs), "every blocking job to be running");

        // More jobs are blocked than the pool has threads, yet pool work (the stand-in for requests) runs.
        for (int i = 0; i < 50; i++)
        {
            int value = await Wait.ForAsync(Task.Run(() => i), "a Task.Run round-trip while the jobs block");
            Assert.Equal(i, value);
        }

        Assert.Equal(BlockingJobs, harness.Control.GetSnapshot().BusyWorkers);
        gate.Open();
    }

    [Fact]
    public void BlockingWorkOnThreadPool_PoolCapped_StarvesTaskRun()
    {
        // The control for the test above: the same blocking work on the pool itself does starve it, so the cap is
        // real. It runs on its own thread with blocking waits, because while the pool is saturated no await could resume.
        int cap = Math.Max(4, Environment.ProcessorCount);
        bool saturated = false, completedWhileBlocked = true, completedAfterRelease = false;
        var observer = new Thread(() =>
        {
            using var capScope = ThreadPoolCap.Apply(cap);
            using var gate = new Gate();
            for (int i = 0; i < cap * 2; i++)
            {
                ThreadPool.UnsafeQueueUserWorkItem(_ => gate.Block(default), null);
            }

            // Saturated: every pool thread is taken (some by our blockers, maybe some by the test runner) and blockers
            // are still waiting for a thread.
            var deadline = DateTime.UtcNow + Wait.Generous;
            while (!(saturated = gate.Entered > 0 && ThreadPool.ThreadCount >= cap && ThreadPool.PendingWorkItemCount > 0) && DateTime.UtcNow < deadline)
            {
                Thread.Sleep(10);
            }

            var roundTrip = Task.Run(() => 42);
            completedWhileBlocked = roundTrip.Wait(500);
            gate.Open();
            completedAfterRelease = roundTrip.Wait(Wait.Generous);
        });

        observer.Start();
        Assert.True(observer.Join(Wait.Generous * 2), "the observer thread did not finish");
        Assert.True(saturated, "the blocking work never saturated the pool");
        Assert.False(completedWhileBlocked, "Task.Run completed while the capped pool was saturated");
        Assert.True(completedAfterRelease, "Task.Run never completed after the pool was released");
    }

    [Fact]
    public async Task AsyncJob_Continuations_ResumeOnTheSameDedicatedWorkerThread()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 1; });
        var result = new TaskCompletionSource<(int Before, int After, bool BeforePool, bool AfterPool, string? Name)>(TaskCreationOptions.RunContinuationsAsynchronously);

        Assert.True(harness.Queue.TryEnqueue(async ct =>
        {
            int before = Environment.CurrentManagedThreadId;
            bool beforePool = Thread.CurrentThread.IsThreadPoolThread;
            await Task.Delay(20, ct);
            await Task.Run(() => { }, ct);
            result.SetResult((before, Environment.CurrentManagedThreadId, beforePool, Thread.CurrentThread.IsThreadPoolThread, Thread.CurrentThread.Name));
        }));

        var (before, after, beforePool, afterPool, name) = await Wait.ForAsync(result.Task, "the async job");
        Assert.Equal(before, after);
        Assert.False(beforePool);
        Assert.False(afterPool);
        Assert.StartsWith("WorkQueue:default#", name);
    }

    [Fact]
    public async Task TryEnqueue_ReferencePayloadHandler_AllocatesNothing()
    {
        const int Jobs = 10_000;
        await using var harness = QueueHarness.Start(o => { o.Capacity = Jobs; });
        var handler = new NoOpHandler();
        var payload = new object();

        // Warm up: the channel's internal buffer grows (amortised) to hold Jobs items, then keeps that size.
        harness.Control.Pause();
        for (int i = 0; i < Jobs; i++)
        {
            Assert.True(harness.Queue.TryEnqueue(handler, payload));
        }

        harness.Control.Resume();
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Succeeded == Jobs, "the warm-up jobs finish");
        harness.Control.Pause();

        // Pausing makes the thread waiting on the channel stand down; an enqueue that races the stand-down completes that
        // wait (the channel's own completion path, once per pause, not per job). Measure the steady state after it.
        await Wait.UntilAsync(() => !harness.Runtime.Pool.HasLeader, "the paused queue's leader to stand down");
        long before = GC.GetAllocatedBytesForCurrentThread();
        int accepted = 0;
        for (int i = 0; i < Jobs; i++)
        {
            accepted += harness.Queue.TryEnqueue(handler, payload) ? 1 : 0;
        }

        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        harness.Control.Resume();
        Assert.Equal(Jobs, accepted);
        Assert.Equal(0, allocated);
    }

    [Fact]
    public async Task Worker_SynchronousJobsWithoutTimeout_AllocatesNothingPerJob()
    {
        const int Jobs = 10_000;
        await using var harness = QueueHarness.Start(o => { o.Capacity = Jobs; o.MinWorkers = 1; o.MaxWorkers = 1; o.AutoScale.Enabled = false; });
        var handler = new AllocationProbe(Jobs);
        var payload = new object();

        // Two backlogs in a row on one thread: the first warms up (JIT, the channel's buffer, the thread's reusable run),
        // the second is measured from inside the jobs, on the worker thread itself.
        for (int round = 0; round < 2; round++)
        {
            harness.Control.Pause();
            for (int i = 0; i < Jobs; i++)
            {
                Assert.True(harness.Queue.TryEnqueue(handler, payload));
            }

            handler.Reset();
            harness.Control.Resume();
            await Wait.ForAsync(handler.Done, "a backlog of synchronous jobs");
        }

        Assert.Equal(0, handler.AllocatedBetweenFirstAndLast);
    }

    private sealed class AllocationProbe(int jobs) : IJobHandler<object>
    {
        private long _first;
        private long _last;
        private int _seen;
        private TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public Task Done => _done.Task;

        public long AllocatedBetweenFirstAndLast => _last - _first;

        public void Reset()
        {
            _seen = 0;
            _done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }

        public ValueTask ExecuteAsync(object payload, CancellationToken cancellationToken)
        {
            long now = GC.GetAllocatedBytesForCurrentThread();
            int seen = ++_seen;
            if (seen == 1)
            {
                _first = now;
            }
            else if (seen == jobs)
            {
                _last = now;
                _done.SetResult();
            }

            return default;
        }
    }

    private sealed class NoOpHandler : IJobHandler<object>
    {
        public ValueTask ExecuteAsync(object payload, CancellationToken cancellationToken) => default;
    }
}

[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class ThreadPoolCapCollection
{
    public const string Name = "Thread pool cap";
}

/// <summary>Caps the CLR thread pool for the duration of a test and restores it afterwards.</summary>
internal sealed class ThreadPoolCap : IDisposable
{
    private readonly int _maxWorker;
    private readonly int _maxIo;
    private readonly int _minWorker;
    private readonly int _minIo;

    private ThreadPoolCap()
    {
        ThreadPool.GetMaxThreads(out _maxWorker, out _maxIo);
        ThreadPool.GetMinThreads(out _minWorker, out _minIo);
    }

    public static ThreadPoolCap Apply(int threads)
    {
        var cap = new ThreadPoolCap();
        ThreadPool.SetMinThreads(Math.Min(cap._minWorker, threads), Math.Min(cap._minIo, threads));
        Assert.True(ThreadPool.SetMaxThreads(threads, Math.Max(threads, cap._minIo)), "the thread pool cap was refused");
        return cap;
    }

    public void Dispose()
    {
        ThreadPool.SetMaxThreads(_maxWorker, _maxIo);
        ThreadPool.SetMinThreads(_minWorker, _minIo);
    }
}
