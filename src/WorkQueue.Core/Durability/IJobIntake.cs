using WorkQueue.Internal;

namespace WorkQueue.Durability;

/// <summary>Where an <see cref="IJobStore"/> puts the jobs it fetched: the queue's bounded prefetch.</summary>
internal interface IJobIntake
{
    /// <summary>Gets how many more fetched jobs the prefetch has room for now.</summary>
    int FreeSlots { get; }

    /// <summary>
    /// Accepts a fetched job: counts it in the queue's ledger and queues it for the threads.
    /// </summary>
    /// <returns><see langword="false"/> when the queue no longer takes fetched jobs (it is stopping, or full); the store keeps the job.</returns>
    bool TryAccept(JobInvoker invoker, object? target, object? state, int attempt);
}
