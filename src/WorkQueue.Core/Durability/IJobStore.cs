using WorkQueue.Internal;

namespace WorkQueue.Durability;

/// <summary>
/// A durable store that a queue's jobs come from and go back to (Redis Streams, in WorkQueue.AspNetCore). A queue with
/// one is the same engine with a different source of jobs: the store fetches jobs into the queue's bounded prefetch
/// through an <see cref="IJobIntake"/>, the queue's threads run them, and each way an attempt ends is handed back here
/// instead of being kept in memory. A queue without a store keeps its jobs in memory.
/// </summary>
/// <remarks>
/// Settlement methods are called on the queue's threads (or the stopper's) and must not block: a store queues them for
/// its own thread. The local ledger still counts every fetched job exactly once; the cluster-wide truth is the store.
/// </remarks>
internal interface IJobStore
{
    /// <summary>
    /// Gets the producer of the queue this store serves (it stores jobs in the store), which
    /// <see cref="IWorkQueueProvider.GetQueue(string)"/> and the keyed <see cref="IWorkQueue"/> give for it.
    /// </summary>
    IWorkQueue Producer { get; }

    /// <summary>Gets how many fetched jobs may wait locally to start: the capacity of the queue's channel.</summary>
    int PrefetchCapacity { get; }

    /// <summary>Starts fetching into <paramref name="intake"/>.</summary>
    void Start(IJobIntake intake);

    /// <summary>
    /// Called on a queue thread as a fetched job is about to start.
    /// </summary>
    /// <returns><see langword="false"/> when the job must not run here (another consumer has taken it over).</returns>
    bool TryStart(in WorkItem item);

    /// <summary>The job succeeded: remove it from the store.</summary>
    void Completed(in WorkItem item);

    /// <summary>The attempt failed and the job has attempts left: store it for a retry after <paramref name="delay"/>.</summary>
    void ScheduleRetry(in WorkItem item, TimeSpan delay, Exception error);

    /// <summary>The job failed its last allowed attempt: move it to the store's dead letters.</summary>
    void DeadLetter(in WorkItem item, Exception error);

    /// <summary>The job honoured a cancel by id (its token fired and it threw <see cref="OperationCanceledException"/>): remove it from the store as cancelled.</summary>
    void Canceled(in WorkItem item);

    /// <summary>The job was fetched and did not complete here (not started at a stop, or cancelled by it): hand it back now.</summary>
    void Release(in WorkItem item);

    /// <summary>
    /// Pauses or resumes this instance's share of the queue: paused, the store fetches and reclaims nothing, so other
    /// instances run the work (the queue hands back the jobs it fetched and has not started); jobs running here keep
    /// their claims and are settled as usual.
    /// </summary>
    void SetPaused(bool paused);

    /// <summary>Stops fetching; jobs already fetched are settled as usual.</summary>
    void StopFetching();

    /// <summary>
    /// Gets where the queue's recurring jobs keep their schedules and record their occurrences, so that each occurrence
    /// runs once across every instance; <see langword="null"/> when the store keeps none (recurring jobs then run per
    /// process, as on an in-memory queue).
    /// </summary>
    IRecurringOccurrenceStore? Recurring { get; }

    /// <summary>Gets this process's consumer and the cluster-wide figures last read from the store (asking for fresh ones).</summary>
    DurableQueueSnapshot GetSnapshot();

    /// <summary>Sends what is still waiting to be settled, then ends the store's own thread.</summary>
    Task StopAsync(TimeSpan timeout);
}
