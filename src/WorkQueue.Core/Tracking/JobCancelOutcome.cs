namespace WorkQueue;

/// <summary>What <see cref="IWorkQueue.CancelAsync(string, CancellationToken)"/> did.</summary>
public enum JobCancelOutcome
{
    /// <summary>The queue knows no such job: the id is unknown, was never handed out, or its job ended longer ago than <see cref="WorkQueueOptions.FinishedJobRetention"/>.</summary>
    NotFound = 0,

    /// <summary>The job was queued, scheduled or waiting to retry: it is removed, will not run (again), and counts as <see cref="WorkQueueTotals.Canceled"/>; its idempotency key is free.</summary>
    Canceled = 1,

    /// <summary>The job is running: its <see cref="CancellationToken"/> was cancelled, and how it ends is recorded when it returns (see <see cref="JobStatus.CancelIgnored"/>).</summary>
    CancelRequested = 2,

    /// <summary>The job had already ended; <see cref="JobCancelResult.Job"/> says how.</summary>
    AlreadyFinished = 3,
}
