namespace WorkQueue;

/// <summary>
/// The latest occurrence of a recurring job and how it went.
/// </summary>
/// <param name="ScheduledFor">The occurrence's time by the schedule (or when it was triggered by hand).</param>
/// <param name="JobId">The id of the job that runs it on its queue (an in-memory queue's number, or a durable queue's stream id), or <see langword="null"/> until it is enqueued or if it was skipped.</param>
/// <param name="Outcome">Where it stands.</param>
/// <param name="StartedAt">When its latest attempt started, if one did.</param>
/// <param name="EndedAt">When its latest attempt ended, if one did.</param>
/// <param name="Error">The latest attempt's error, or why it was skipped.</param>
public sealed record RecurringRun(
    DateTimeOffset ScheduledFor,
    string? JobId,
    RecurringRunOutcome Outcome,
    DateTimeOffset? StartedAt,
    DateTimeOffset? EndedAt,
    string? Error);
