namespace WorkQueue;

/// <summary>
/// Specifies where the latest occurrence of a recurring job stands.
/// </summary>
public enum RecurringRunOutcome
{
    /// <summary>The occurrence was enqueued and has not started.</summary>
    Enqueued,

    /// <summary>An attempt is running.</summary>
    Running,

    /// <summary>The latest attempt succeeded.</summary>
    Succeeded,

    /// <summary>The latest attempt failed (it may be retried, as any job).</summary>
    Failed,

    /// <summary>The occurrence was not enqueued: its queue was stopping or refused it.</summary>
    Skipped,
}
