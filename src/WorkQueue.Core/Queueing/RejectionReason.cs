namespace WorkQueue;

/// <summary>
/// Specifies why a queue did not accept a job.
/// </summary>
public enum RejectionReason
{
    /// <summary>The queue was full (and configured to reject, or the wait for space timed out).</summary>
    QueueFull,

    /// <summary>The queue is stopping or stopped and accepts no more jobs.</summary>
    QueueStopped,

    /// <summary>A durable queue's store (Redis) could not be reached; the inner exception says why.</summary>
    StoreUnavailable,
}
