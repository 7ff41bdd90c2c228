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
    /// <param name="invoker">Runs the job.</param>
    /// <param name="target">The store's entry, handed back with the job's outcome.</param>
    /// <param name="state">The payload.</param>
    /// <param name="attempt">The attempt (1 for the first run).</param>
    /// <param name="waitedInStore">
    /// How long the job already waited in the store to be fetched. It counts in the job's queue wait, so that the
    /// autoscaler sees a backlog that waits in the store (the prefetch in front of the threads stays short by design).
    /// </param>
    /// <returns><see langword="false"/> when the queue no longer takes fetched jobs (it is stopping, or full); the store keeps the job.</returns>
    bool TryAccept(JobInvoker invoker, object? target, object? state, int attempt, TimeSpan waitedInStore);
}
