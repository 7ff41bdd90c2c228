namespace WorkQueue;

/// <summary>
/// Running totals of a queue since it was created.
/// </summary>
/// <remarks>
/// Every accepted job ends in exactly one of <see cref="Succeeded"/>, <see cref="DeadLettered"/>, <see cref="Dropped"/>,
/// <see cref="Abandoned"/>, <see cref="Returned"/> or <see cref="Canceled"/>, so
/// <c>Enqueued = Succeeded + DeadLettered + Dropped + Abandoned + Returned + Canceled + Unfinished</c>. For a durable queue these are
/// this process's figures: <see cref="Enqueued"/> counts the jobs it fetched from the store.
/// <see cref="Failed"/> counts failed attempts, including those that were then retried.
/// </remarks>
/// <param name="Enqueued">Jobs accepted.</param>
/// <param name="Rejected">Jobs not accepted (queue full, stopped, or the caller cancelled the wait for space).</param>
/// <param name="Started">Attempts started (a retried job counts once per attempt).</param>
/// <param name="Succeeded">Jobs whose last attempt succeeded.</param>
/// <param name="Failed">Attempts that threw or timed out.</param>
/// <param name="Retried">Attempts that failed and were scheduled again.</param>
/// <param name="DeadLettered">Jobs that failed their last allowed attempt.</param>
/// <param name="Dropped">Accepted jobs dropped by <see cref="QueueFullMode.DropOldest"/>.</param>
/// <param name="Abandoned">Accepted jobs reported as not run when the queue stopped.</param>
/// <param name="Returned">Durable queues: fetched jobs that went back to the store (a retry stored there, or handed back at a stop); always 0 in memory.</param>
/// <param name="Canceled">Scheduled jobs cancelled before they came due.</param>
/// <param name="Unfinished">Accepted jobs that have not ended yet: queued, running or waiting to be retried.</param>
public sealed record WorkQueueTotals(
    long Enqueued,
    long Rejected,
    long Started,
    long Succeeded,
    long Failed,
    long Retried,
    long DeadLettered,
    long Dropped,
    long Abandoned,
    long Returned,
    long Canceled,
    long Unfinished);
