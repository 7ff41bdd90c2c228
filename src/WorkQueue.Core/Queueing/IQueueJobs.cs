namespace WorkQueue.Queueing;

/// <summary>
/// A queue's jobs by id (status, cancel, search), as its producer answers them: the narrow part of
/// <see cref="QueueRuntime"/> that <see cref="QueueProducer"/> needs, so the producer does not hold the runtime above it.
/// </summary>
internal interface IQueueJobs
{
    /// <summary>Gets a tracked job's status, or <see langword="null"/> for an id the queue does not track.</summary>
    JobStatus? GetJob(string jobId);

    /// <summary>Cancels a tracked job by id.</summary>
    JobCancelResult Cancel(string jobId);

    /// <summary>Finds a page of tracked jobs; <paramref name="query"/> is validated already.</summary>
    JobPage FindJobs(JobQuery query);
}
