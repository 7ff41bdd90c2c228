namespace WorkQueue;

/// <summary>
/// Describes a recurring job: its schedule, its next and its latest run.
/// </summary>
/// <param name="Id">The job's id.</param>
/// <param name="Schedule">The cron expression, or the interval (<c>every 00:05:00</c>).</param>
/// <param name="TimeZone">The time zone the schedule is read in.</param>
/// <param name="Queue">The queue its occurrences run on.</param>
/// <param name="Handler">The handler type.</param>
/// <param name="IsPaused"><see langword="true"/> while it is paused.</param>
/// <param name="NextRunAt">When it runs next, or <see langword="null"/> while paused or when the schedule has no later time.</param>
/// <param name="LastRun">Its latest occurrence, or <see langword="null"/> if it has not run in this process.</param>
public sealed record RecurringJobInfo(
    string Id,
    string Schedule,
    string TimeZone,
    string Queue,
    string Handler,
    bool IsPaused,
    DateTimeOffset? NextRunAt,
    RecurringRun? LastRun);
