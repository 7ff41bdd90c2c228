namespace WorkQueue;

/// <summary>
/// A job that failed on its last allowed attempt.
/// </summary>
/// <param name="Job">The job.</param>
/// <param name="Exception">The exception of the last attempt (a <see cref="TimeoutException"/> when it ran out of time).</param>
/// <param name="DeadLetteredAt">When the job was dead-lettered.</param>
public sealed record DeadLetteredJob(JobInfo Job, Exception Exception, DateTimeOffset DeadLetteredAt);
