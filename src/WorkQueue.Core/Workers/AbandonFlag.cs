namespace WorkQueue.Workers;

/// <summary>
/// Whether a queue has begun to abandon its work (its stop's deadline passed): set once by the pool
/// (<see cref="WorkerPool.BeginAbandon"/>), read by the pool's runs and by the layer that starts and settles jobs.
/// Created before both, so that neither needs the other to exist to know it.
/// </summary>
internal sealed class AbandonFlag
{
    private volatile bool _set;

    /// <summary>Gets a value indicating whether the queue is abandoning.</summary>
    public bool IsSet => _set;

    /// <summary>Marks the queue as abandoning, with a full fence: a run that publishes its start after this sees it.</summary>
    public void Set()
    {
        _set = true;
        Interlocked.MemoryBarrier();
    }
}
