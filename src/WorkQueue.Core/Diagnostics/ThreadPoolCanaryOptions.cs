using WorkQueue.Validation;

namespace WorkQueue;

/// <summary>
/// Options for the thread-pool starvation alarm: a canary work item posted to the CLR thread pool every
/// <see cref="Interval"/> while the pool has work queued (and every <see cref="IdleInterval"/> while it has none), timed
/// from the engine's own timer thread, so a starved pool is seen while it is starved.
/// </summary>
public sealed class ThreadPoolCanaryOptions
{
    /// <summary>
    /// Gets or sets a value indicating whether the canary runs.
    /// </summary>
    /// <remarks>Its cost: one timer tick per <see cref="Interval"/> on the engine's timer thread, and one tiny pool work item
    /// per tick while the pool has work queued or per <see cref="IdleInterval"/> while it has none.</remarks>
    /// <value>The default value is <see langword="true"/>.</value>
    public bool Enabled { get; set; } = true;

    /// <summary>
    /// Gets or sets how often the canary looks at the pool: it posts a work item when the pool has work queued (and reads
    /// the wait of one still waiting), so a starving pool is seen within about this long.
    /// </summary>
    /// <value>The default value is 1 second.</value>
    [TimeSpanRange("00:00:00.010", "00:01:00")]
    public TimeSpan Interval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Gets or sets how often a work item is posted while the pool has nothing queued, to keep the lag measured.
    /// </summary>
    /// <remarks>
    /// A pool with nothing queued cannot be starving, and waking one of its sleeping threads costs far more than the
    /// work item itself (the woken thread spins looking for more work before it sleeps again: about 2 ms of CPU each time
    /// on the 2-core machine of benchmarks/README.md), so an idle process pays that once per this interval instead of
    /// once per <see cref="Interval"/>. A value shorter than <see cref="Interval"/> acts as <see cref="Interval"/>.
    /// </remarks>
    /// <value>The default value is 1 minute.</value>
    [TimeSpanRange("00:00:00.010", "01:00:00")]
    public TimeSpan IdleInterval { get; set; } = TimeSpan.FromMinutes(1);

    /// <summary>
    /// Gets or sets how long a work item may wait for a pool thread before the engine logs that the pool is starving
    /// (a warning naming the likely cause; an information line when it recovers).
    /// </summary>
    /// <value>The default value is 500 milliseconds: a healthy pool starts a work item in well under a millisecond, and
    /// half a second is already a visible stall for every request.</value>
    [TimeSpanRange("00:00:00.010", "00:10:00")]
    public TimeSpan StarvationThreshold { get; set; } = TimeSpan.FromMilliseconds(500);
}
