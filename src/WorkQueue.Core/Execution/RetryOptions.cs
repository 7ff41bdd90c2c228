using System.ComponentModel.DataAnnotations;
using WorkQueue.Validation;

namespace WorkQueue;

/// <summary>
/// Configures how failed jobs are retried: exponential backoff with jitter, then the dead-letter sink.
/// </summary>
/// <remarks>
/// Retries are off by default (<see cref="MaxAttempts"/> is 1) because a fire-and-forget job is not always safe to
/// run twice; turn them on for idempotent jobs.
/// </remarks>
public sealed class RetryOptions
{
    /// <summary>
    /// Gets or sets how many times a job may run in all, the first attempt included.
    /// </summary>
    /// <value>The default value is 1 (no retries).</value>
    [Range(1, 100)]
    public int MaxAttempts { get; set; } = 1;

    /// <summary>
    /// Gets or sets the delay before the first retry; each later retry doubles it, up to <see cref="MaxDelay"/>.
    /// </summary>
    /// <value>The default value is 1 second.</value>
    [TimeSpanRange("00:00:00", "1.00:00:00")]
    public TimeSpan BaseDelay { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Gets or sets the longest delay between two attempts.
    /// </summary>
    /// <value>The default value is 1 minute.</value>
    [TimeSpanRange("00:00:00", "1.00:00:00")]
    public TimeSpan MaxDelay { get; set; } = TimeSpan.FromMinutes(1);

    /// <summary>
    /// Gets or sets a value indicating whether each delay is randomised between half and all of its nominal value,
    /// so that jobs that failed together do not retry together.
    /// </summary>
    /// <value>The default value is <see langword="true"/>.</value>
    public bool UseJitter { get; set; } = true;

    /// <summary>
    /// Gets or sets a predicate that decides whether a failure is worth retrying, or <see langword="null"/> to retry
    /// every failure.
    /// </summary>
    /// <value>The default value is <see langword="null"/>.</value>
    public Func<Exception, bool>? ShouldRetry { get; set; }
}
