namespace WorkQueue;

/// <summary>What <see cref="IWorkQueue.CancelAsync(string, CancellationToken)"/> did, and the job as it was left.</summary>
/// <param name="Outcome">What the cancel did.</param>
/// <param name="Job">The job's status after the cancel, or <see langword="null"/> when <paramref name="Outcome"/> is <see cref="JobCancelOutcome.NotFound"/>.</param>
public sealed record JobCancelResult(JobCancelOutcome Outcome, JobStatus? Job);
