namespace WorkQueue.AspNetCore;

/// <summary>What <see cref="IDurableQueue{TPayload}.CancelAsync(string, CancellationToken)"/> did, and the job as it was then.</summary>
/// <param name="Outcome">
/// What the cancel did: <see cref="JobCancelOutcome.Canceled"/> (it was queued, scheduled or waiting for a retry, and will
/// not run), <see cref="JobCancelOutcome.CancelRequested"/> (it was delivered to a consumer, named in
/// <see cref="DurableJobStatus.ConsumerName"/>, which was asked to fire its token), <see cref="JobCancelOutcome.AlreadyFinished"/>
/// or <see cref="JobCancelOutcome.NotFound"/>.
/// </param>
/// <param name="Job">The job's status read after the cancel, or <see langword="null"/> when it is not found (or no longer, when it ended meanwhile and the queue keeps no records).</param>
public sealed record DurableJobCancelResult(JobCancelOutcome Outcome, DurableJobStatus? Job);
