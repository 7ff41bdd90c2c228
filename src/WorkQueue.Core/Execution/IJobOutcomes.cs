using WorkQueue.Durability;
using WorkQueue.Internal;

namespace WorkQueue.Execution;

/// <summary>
/// Where the ways a job can end go, for one kind of queue: an in-memory queue keeps its retries, dead letters and
/// abandoned jobs in memory (<see cref="InMemoryOutcomes"/>); a durable queue hands each to its <see cref="IJobStore"/>
/// (<see cref="StoreOutcomes"/>). The queue picks one when it is built; <see cref="JobRunner"/> makes the decisions
/// (cancel, success, retry, dead letter) and keeps the metrics, logs, traces and callbacks, the same for both kinds.
/// </summary>
/// <remarks>
/// Each method that ends a job counts it in the <see cref="Accounting.JobLedger"/> as it sends it on, in the order that
/// kind of queue needs (an in-memory dead letter is kept before it is counted; a stored outcome is counted before it is
/// queued for the store), so that every accepted job ends exactly once whichever kind it is in. Called on the queue's
/// threads (or the stopper's); none blocks.
/// </remarks>
internal interface IJobOutcomes
{
    /// <summary>
    /// Gets a value indicating whether a failed attempt may be retried now: a retry kept in memory could not run after
    /// the queue abandons; a durable one is kept in the store, so it survives the stop.
    /// </summary>
    bool CanRetry { get; }

    /// <summary>Called as a job is about to start, after the queue's own checks.</summary>
    /// <returns><see langword="false"/> when the job must not run here (a durable queue's store took it back); nothing was counted.</returns>
    bool TryStart(in WorkItem item);

    /// <summary>The job succeeded.</summary>
    void Succeeded(in WorkItem item);

    /// <summary>The job honoured a cancel by id: it ends cancelled.</summary>
    void Canceled(in WorkItem item);

    /// <summary>The attempt failed and the job will run again after <paramref name="delay"/> (the retry is counted already).</summary>
    void ScheduleRetry(in WorkItem item, TimeSpan delay, Exception error);

    /// <summary>The job failed for good: <paramref name="job"/> describes it, as the dead-letter callback gets it.</summary>
    void DeadLettered(in WorkItem item, DeadLetteredJob job, Exception error);

    /// <summary>
    /// The job was taken from the queue and will not start here, because the queue is abandoning (or, durable, stops or
    /// pauses its intake): a durable queue hands it back to its store; an in-memory one reports it abandoned.
    /// </summary>
    void NotStarted(in WorkItem item);

    /// <summary>The stop cancelled the job as it ran, and it ended: handed back to the store, or reported abandoned.</summary>
    void StoppedWhileRunning(in WorkItem item);
}
