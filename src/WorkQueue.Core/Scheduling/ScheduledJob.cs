namespace WorkQueue;

/// <summary>
/// Describes a job that waits for its time on an in-memory queue.
/// </summary>
/// <param name="Job">The job.</param>
/// <param name="DueAt">When it becomes ready to run.</param>
/// <param name="ScheduledAt">When it was scheduled.</param>
public sealed record ScheduledJob(JobInfo Job, DateTimeOffset DueAt, DateTimeOffset ScheduledAt);
