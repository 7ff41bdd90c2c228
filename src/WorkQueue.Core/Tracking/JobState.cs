namespace WorkQueue;

/// <summary>
/// Where a job of an in-memory queue is in its life, as <see cref="IWorkQueue.GetJobAsync(string, CancellationToken)"/> reports it.
/// </summary>
/// <remarks>
/// A job moves Queued (or Scheduled) -> Running -> Retrying -> Queued -> Running ... and ends in exactly one of
/// <see cref="Succeeded"/>, <see cref="DeadLettered"/>, <see cref="Canceled"/>, <see cref="Dropped"/> or
/// <see cref="Abandoned"/>, the same endings <see cref="WorkQueueTotals"/> counts. A job whose attempt failed is
/// <see cref="Retrying"/> while it waits for its next attempt and <see cref="DeadLettered"/> when it failed its last one.
/// </remarks>
public enum JobState
{
    /// <summary>Waiting in the queue for a thread.</summary>
    Queued = 0,

    /// <summary>Waiting for its time (<see cref="IWorkQueue.ScheduleAsync{THandler, TPayload}(TPayload, DateTimeOffset, CancellationToken)"/> or <see cref="JobOptions.RunAt"/>).</summary>
    Scheduled = 1,

    /// <summary>Running on one of the queue's threads.</summary>
    Running = 2,

    /// <summary>An attempt failed; waiting for its retry delay.</summary>
    Retrying = 3,

    /// <summary>Ended: its last attempt succeeded.</summary>
    Succeeded = 4,

    /// <summary>Ended: it failed its last allowed attempt (or failed after a cancel it ignored) and was dead-lettered.</summary>
    DeadLettered = 5,

    /// <summary>Ended: cancelled before it started (it never ran), or it honoured a cancel while running.</summary>
    Canceled = 6,

    /// <summary>Ended: pushed out of a full queue by <see cref="QueueFullMode.DropOldest"/>.</summary>
    Dropped = 7,

    /// <summary>Ended: not completed when the queue stopped; it is in the <see cref="ShutdownReport"/>.</summary>
    Abandoned = 8,
}
