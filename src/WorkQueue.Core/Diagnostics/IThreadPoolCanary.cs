namespace WorkQueue;

/// <summary>
/// Reads the thread-pool starvation alarm: how long work items wait for a CLR thread-pool thread, measured by a canary
/// from the engine's own timer thread (which the pool's starvation cannot stop). Registered by <c>AddWorkQueue</c>.
/// </summary>
public interface IThreadPoolCanary
{
    /// <summary>
    /// Gets what the canary sees now.
    /// </summary>
    /// <returns>The pool's health.</returns>
    ThreadPoolHealth GetHealth();
}
