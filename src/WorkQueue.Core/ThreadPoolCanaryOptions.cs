using System.ComponentModel.DataAnnotations;

namespace WorkQueue;

/// <summary>
/// Options for the thread-pool starvation alarm: a canary work item posted to the CLR thread pool every
/// <see cref="Interval"/>, timed from the engine's own timer thread, so a starved pool is seen while it is starved.
/// </summary>
public sealed class ThreadPoolCanaryOptions
{
    /// <summary>
    /// Gets or sets a value indicating whether the canary runs.
    /// </summary>
    /// <remarks>Its cost: one timer tick on the engine's timer thread and one tiny pool work item per interval.</remarks>
    /// <value>The default value is <see langword="true"/>.</value>
    public bool Enabled { get; set; } = true;

    /// <summary>
    /// Gets or sets how often a canary work item is posted.
    /// </summary>
    /// <value>The default value is 1 second.</value>
    [Range(typeof(TimeSpan), "00:00:00.010", "00:01:00")]
    public TimeSpan Interval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Gets or sets how long a work item may wait for a pool thread before the engine logs that the pool is starving
    /// (a warning naming the likely cause; an information line when it recovers).
    /// </summary>
    /// <value>The default value is 500 milliseconds: a healthy pool starts a work item in well under a millisecond, and
    /// half a second is already a visible stall for every request.</value>
    [Range(typeof(TimeSpan), "00:00:00.010", "00:10:00")]
    public TimeSpan StarvationThreshold { get; set; } = TimeSpan.FromMilliseconds(500);
}
