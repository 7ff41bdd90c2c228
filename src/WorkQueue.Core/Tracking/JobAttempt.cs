namespace WorkQueue;

/// <summary>One attempt of a job (see <see cref="JobStatus.Attempts"/>).</summary>
/// <param name="Number">The attempt's number (1 for the first run).</param>
/// <param name="WorkerName">Who ran it (a durable queue's consumer), or <see langword="null"/> when it never reached one (a job cancelled while it waited).</param>
/// <param name="StartedAt">When it started (the running instance's clock), or <see langword="null"/> when not known.</param>
/// <param name="EndedAt">When it ended (the store's clock), or <see langword="null"/> while it runs.</param>
/// <param name="Outcome">
/// How it ended: <see cref="JobState.Retrying"/> (it failed, and the job was retried), <see cref="JobState.Succeeded"/>,
/// <see cref="JobState.DeadLettered"/> or <see cref="JobState.Canceled"/>; <see cref="JobState.Running"/> while it runs.
/// </param>
/// <param name="Error">The error it failed with, or <see langword="null"/>.</param>
public sealed record JobAttempt(int Number, string? WorkerName, DateTimeOffset? StartedAt, DateTimeOffset? EndedAt, JobState Outcome, string? Error);
