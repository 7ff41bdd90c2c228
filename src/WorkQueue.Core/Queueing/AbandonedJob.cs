namespace WorkQueue;

/// <summary>
/// An accepted job that did not complete before its queue stopped.
/// </summary>
/// <param name="Job">The job.</param>
/// <param name="Reason">Why it did not complete.</param>
public sealed record AbandonedJob(JobInfo Job, AbandonReason Reason);
