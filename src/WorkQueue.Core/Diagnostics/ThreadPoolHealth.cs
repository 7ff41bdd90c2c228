namespace WorkQueue;

/// <summary>
/// What the thread-pool canary sees: how long work items wait for a CLR thread-pool thread.
/// </summary>
/// <param name="Lag">How long the latest canary waited, or, if it is still waiting, how long so far.</param>
/// <param name="MaxLag">The longest wait since the canary started.</param>
/// <param name="IsStarving"><see langword="true"/> from a wait over <see cref="ThreadPoolCanaryOptions.StarvationThreshold"/> until a canary runs within it again.</param>
/// <param name="StarvingSince">When the current starvation began, or <see langword="null"/>.</param>
/// <param name="ThreadCount">The pool's thread count (<see cref="ThreadPool.ThreadCount"/>).</param>
/// <param name="PendingWorkItems">Work items waiting for a pool thread (<see cref="ThreadPool.PendingWorkItemCount"/>).</param>
/// <param name="IsEnabled">Whether the canary runs (<see cref="ThreadPoolCanaryOptions.Enabled"/>).</param>
public sealed record ThreadPoolHealth(
    TimeSpan Lag,
    TimeSpan MaxLag,
    bool IsStarving,
    DateTimeOffset? StarvingSince,
    int ThreadCount,
    long PendingWorkItems,
    bool IsEnabled);
