namespace WorkQueue;

/// <summary>
/// Options for one recurring job.
/// </summary>
public sealed class RecurringJobOptions
{
    /// <summary>
    /// Gets or sets the queue each occurrence is enqueued on.
    /// </summary>
    /// <value>The default value is <see cref="WorkQueueOptions.DefaultQueueName"/>.</value>
    public string Queue { get; set; } = WorkQueueOptions.DefaultQueueName;

    /// <summary>
    /// Gets or sets the time zone a cron expression is read in, by its IANA or Windows id (<c>Europe/Paris</c>). Across a
    /// daylight-saving change, a time that does not exist runs once when the clock jumps past it, and a time that occurs
    /// twice runs once, at its first occurrence (interval jobs run every interval: daylight saving does not apply).
    /// </summary>
    /// <value>The default value is <c>UTC</c>.</value>
    public string TimeZone { get; set; } = "UTC";

    /// <summary>
    /// Gets or sets what a recurring job on a durable queue does with occurrences that fell while no instance ran
    /// (found from the latest occurrence any instance enqueued, kept in Redis). In-memory jobs never look back.
    /// </summary>
    /// <value>The default value is <see cref="MissedOccurrencePolicy.RunOnce"/>, as Hangfire and Quartz.NET's default misfire handling do.</value>
    public MissedOccurrencePolicy MissedOccurrences { get; set; } = MissedOccurrencePolicy.RunOnce;

    /// <summary>
    /// Gets or sets a value indicating whether the job starts paused (resume it with <see cref="IRecurringJobs.Resume"/>).
    /// </summary>
    /// <value>The default value is <see langword="false"/>.</value>
    public bool StartPaused { get; set; }
}
