using WorkQueue.Validation;

namespace WorkQueue;

/// <summary>
/// Configures the autoscaler: when jobs wait longer than <see cref="TargetQueueWait"/>, workers are added up to
/// <see cref="WorkQueueOptions.MaxWorkers"/>; idle workers retire after <see cref="WorkQueueOptions.IdleTimeout"/>.
/// </summary>
public sealed class AutoScaleOptions
{
    /// <summary>
    /// Gets or sets a value indicating whether the pool grows by itself under backlog.
    /// </summary>
    /// <value>The default value is <see langword="true"/>.</value>
    public bool Enabled { get; set; } = true;

    /// <summary>
    /// Gets or sets the longest a job should wait between enqueue and start; a longer wait adds workers.
    /// </summary>
    /// <value>The default value is 100 milliseconds.</value>
    [TimeSpanRange("00:00:00.001", "01:00:00")]
    public TimeSpan TargetQueueWait { get; set; } = TimeSpan.FromMilliseconds(100);

    /// <summary>
    /// Gets or sets the shortest time between two scale-ups, so one burst does not add every worker at once.
    /// </summary>
    /// <value>The default value is 500 milliseconds.</value>
    [TimeSpanRange("00:00:00", "01:00:00")]
    public TimeSpan ScaleUpCooldown { get; set; } = TimeSpan.FromMilliseconds(500);

    /// <summary>
    /// Gets or sets how often, while the queue has work, the autoscaler checks the oldest waiting job; it does not run
    /// while the queue is idle.
    /// </summary>
    /// <value>The default value is 250 milliseconds.</value>
    [TimeSpanRange("00:00:00.010", "00:10:00")]
    public TimeSpan SampleInterval { get; set; } = TimeSpan.FromMilliseconds(250);
}
