namespace WorkQueue;

/// <summary>
/// Specifies what a queue does with a new job when it already holds <see cref="WorkQueueOptions.Capacity"/> jobs.
/// </summary>
public enum QueueFullMode
{
    /// <summary>
    /// <c>EnqueueAsync</c> waits for space (up to <see cref="WorkQueueOptions.EnqueueTimeout"/>); <c>TryEnqueue</c> returns <see langword="false"/>.
    /// </summary>
    Wait,

    /// <summary>
    /// The job is rejected at once: <c>TryEnqueue</c> returns <see langword="false"/> and <c>EnqueueAsync</c> throws
    /// <see cref="JobRejectedException"/>.
    /// </summary>
    Reject,

    /// <summary>
    /// The oldest queued job is dropped to make room. Each drop is counted, logged and passed to
    /// <see cref="WorkQueueOptions.OnJobDropped"/>.
    /// </summary>
    DropOldest,
}
