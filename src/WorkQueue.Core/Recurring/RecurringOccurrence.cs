namespace WorkQueue;

/// <summary>
/// The payload of one run of a recurring job: which job, and which occurrence of its schedule.
/// </summary>
/// <param name="RecurringJobId">The recurring job's id.</param>
/// <param name="ScheduledFor">The occurrence's time by the job's schedule (or, triggered by hand, when it was triggered).</param>
/// <param name="IsTriggeredManually"><see langword="true"/> when someone triggered the job outside its schedule.</param>
public sealed record RecurringOccurrence(string RecurringJobId, DateTimeOffset ScheduledFor, bool IsTriggeredManually);
