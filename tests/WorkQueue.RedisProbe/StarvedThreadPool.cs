namespace WorkQueue.RedisProbe;

/// <summary>
/// Caps the CLR thread pool at its minimum and blocks every one of its threads, with more blocked work items queued
/// behind them, until disposed: the incident's starved pool, made deterministic.
/// </summary>
internal sealed class StarvedThreadPool : IDisposable
{
    private readonly ManualResetEventSlim _release = new(false);
    private int _blocked;

    private StarvedThreadPool()
    {
    }

    public int MaxWorkerThreads { get; private set; }

    public int Blocked => Volatile.Read(ref _blocked);

    /// <summary>Starves the pool; returns once every pool thread is blocked and work is still waiting.</summary>
    public static StarvedThreadPool Start(int workItems, TimeSpan timeout)
    {
        var pool = new StarvedThreadPool();
        ThreadPool.GetMinThreads(out int minWorkers, out int minIo);
        ThreadPool.GetMaxThreads(out _, out int maxIo);
        if (!ThreadPool.SetMaxThreads(minWorkers, Math.Max(minIo, maxIo)))
        {
            throw new InvalidOperationException($"ThreadPool.SetMaxThreads({minWorkers}, ...) refused.");
        }

        pool.MaxWorkerThreads = minWorkers;
        for (int i = 0; i < workItems; i++)
        {
            ThreadPool.UnsafeQueueUserWorkItem(static p => p.Block(), pool, preferLocal: false);
        }

        // Starved means: as many work items are inside Block as the pool may run at once (its cap), and blocked work is
        // still queued behind them. (Not "every thread it has": threads beyond a lowered cap stay alive, idle, for their
        // 20 s idle timeout.) Nothing announces that state, so it is polled, with a deadline.
        if (!SpinWait.SpinUntil(() => pool.Blocked >= minWorkers && ThreadPool.PendingWorkItemCount > 0, timeout))
        {
            pool.Dispose();
            throw new TimeoutException(
                $"The pool did not starve within {timeout}: {pool.Blocked} blocked, {ThreadPool.ThreadCount} threads, {ThreadPool.PendingWorkItemCount} pending.");
        }

        return pool;
    }

    /// <summary>Lets every blocked work item finish.</summary>
    public void Dispose() => _release.Set();

    private void Block()
    {
        Interlocked.Increment(ref _blocked);
        _release.Wait();
    }
}
