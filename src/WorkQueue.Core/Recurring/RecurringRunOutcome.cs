namespace WorkQueue;

/// <summary>
/// Specifies where the latest occurrence of a recurring job stands.
/// </summary>
public enum RecurringRunOutcome
{
    /// <summary>The occurrence was enqueued (on a durable queue, this is the last outcome this instance sees: the job runs on any instance, and its end is in the queue's figures).</summary>
    Enqueued,

    /// <summary>Durable queues: another instance had already enqueued this occurrence, so this one did not (each runs once).</summary>
    EnqueuedElsewhere,

    /// <summary>An attempt is running.</summary>
    Running,

    /// <summary>The latest attempt succeeded.</summary>
    Succeeded,

    /// <summary>The latest attempt failed (it may be retried, as any job).</summary>
    Failed,

    /// <summary>The occurrence was not enqueued: its queue was stopping or refused it.</summary>
    Skipped,
}
