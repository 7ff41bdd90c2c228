namespace WorkQueue;

/// <summary>
/// Specifies what a recurring job on a durable queue does with occurrences that fell while no instance was running
/// (every instance down, or the job not yet registered anywhere). In-memory recurring jobs never look back.
/// </summary>
public enum MissedOccurrencePolicy
{
    /// <summary>Run once, as soon as an instance starts, for the latest missed occurrence (however many were missed).</summary>
    RunOnce,

    /// <summary>Skip them: the next run is the next occurrence after now.</summary>
    Skip,
}
