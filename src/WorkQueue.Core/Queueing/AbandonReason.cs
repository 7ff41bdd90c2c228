namespace WorkQueue;

/// <summary>
/// Specifies why an accepted job did not run to completion before its queue stopped.
/// </summary>
public enum AbandonReason
{
    /// <summary>The job was still queued when the shutdown deadline passed.</summary>
    NotStarted,

    /// <summary>The job was waiting to be retried when the shutdown deadline passed.</summary>
    RetryPending,

    /// <summary>The job was running at the deadline, was cancelled and ended by throwing.</summary>
    Canceled,

    /// <summary>The job was running at the deadline and had not returned when the grace period ended.</summary>
    StillRunning,

    /// <summary>The job was scheduled for a time that had not come when the queue began to stop.</summary>
    NotDue,
}
