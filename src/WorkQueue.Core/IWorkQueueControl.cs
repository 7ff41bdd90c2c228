namespace WorkQueue;

/// <summary>
/// Controls one queue: snapshots, dead letters, worker count, pause and stop. Reached through
/// <see cref="IWorkQueueProvider"/>; the producer side is <see cref="IWorkQueue"/>.
/// </summary>
public interface IWorkQueueControl
{
    /// <summary>Gets the queue's name, as first declared.</summary>
    string Name { get; }

    /// <summary>
    /// Gets a point-in-time view of the queue: depth, threads, running jobs, totals, recent latencies and stuck jobs.
    /// </summary>
    /// <returns>The snapshot.</returns>
    WorkQueueSnapshot GetSnapshot();

    /// <summary>
    /// Gets the most recent dead-lettered jobs (up to <see cref="WorkQueueOptions.DeadLetterCapacity"/>), oldest first.
    /// </summary>
    /// <returns>The dead-lettered jobs.</returns>
    IReadOnlyList<DeadLetteredJob> GetDeadLetters();

    /// <summary>
    /// Sets a manual thread count that holds until <see cref="UseAutoScaling"/> is called. Growing starts threads now;
    /// shrinking retires idle threads now and busy ones when their current work ends.
    /// </summary>
    /// <param name="count">The number of threads, from 1 to <see cref="WorkQueueOptions.MaxWorkers"/>.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="count"/> is below 1 or above the queue's <c>MaxWorkers</c>.</exception>
    void SetWorkerCount(int count);

    /// <summary>
    /// Hands the thread count back to the autoscaler.
    /// </summary>
    void UseAutoScaling();

    /// <summary>
    /// Stops starting jobs; running jobs finish and new jobs are still accepted.
    /// </summary>
    void Pause();

    /// <summary>
    /// Starts jobs again after <see cref="Pause"/>.
    /// </summary>
    void Resume();

    /// <summary>
    /// Stops this queue alone: refuses new jobs from outside any job at once, keeps accepting jobs enqueued by running
    /// jobs, lets queued, running and retrying jobs finish until the drain timeout (or
    /// <paramref name="cancellationToken"/>), then cancels what is left and reports every job that did not complete.
    /// Calling it again returns the same report.
    /// </summary>
    /// <remarks>
    /// Queues that feed each other should stop together, with <see cref="IWorkQueueProvider.StopAsync(TimeSpan, CancellationToken)"/>
    /// (the host does that): a queue stopped alone refuses work from outside jobs while the queues it feeds may still
    /// be running, and stops as soon as its own jobs are done.
    /// </remarks>
    /// <param name="drainTimeout">How long to let jobs finish, or <see cref="Timeout.InfiniteTimeSpan"/> to rely on the token.</param>
    /// <param name="cancellationToken">Ends the drain early, as the host's shutdown timeout does.</param>
    /// <returns>The shutdown report.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="drainTimeout"/> is negative (other than infinite) or longer than about 49.7 days.</exception>
    Task<ShutdownReport> StopAsync(TimeSpan drainTimeout, CancellationToken cancellationToken = default);

    /// <summary>
    /// Gets the scheduled jobs waiting for their time, the soonest first (in-memory queues; empty for a durable queue).
    /// </summary>
    /// <remarks>
    /// Jobs due at the same instant are listed in id order. The call reads every job the queue holds once, keeping the
    /// soonest <paramref name="maxCount"/>; it allocates for the jobs it returns only.
    /// </remarks>
    /// <param name="maxCount">The most jobs to return.</param>
    /// <returns>The scheduled jobs.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxCount"/> is negative.</exception>
    IReadOnlyList<ScheduledJob> GetScheduledJobs(int maxCount);

    /// <summary>
    /// Gets a job of an in-memory queue by its id: where it is (queued, scheduled, running, retrying) or how it ended.
    /// </summary>
    /// <remarks>
    /// <para>
    /// The queue tracks the jobs whose id it handed out: those enqueued with <see cref="JobOptions"/>
    /// (<see cref="EnqueueResult.JobId"/>) and scheduled ones (<c>Schedule</c>, recurring occurrences). Jobs enqueued with
    /// <c>TryEnqueue</c> or <c>EnqueueAsync</c> without options are not tracked, so that path costs nothing more; for
    /// those this returns <see langword="null"/>. An ended job is kept for <see cref="WorkQueueOptions.FinishedJobRetention"/>,
    /// up to <see cref="WorkQueueOptions.MaxFinishedJobs"/> of them.
    /// </para>
    /// <para>A durable queue does not track its jobs here yet: it returns <see langword="null"/>.</para>
    /// </remarks>
    /// <param name="jobId">The job's id.</param>
    /// <returns>The job's status, or <see langword="null"/> if the queue knows no such job (unknown, untracked, or ended longer ago than the retention).</returns>
    JobStatus? GetJob(string jobId);

    /// <summary>
    /// Cancels a job of an in-memory queue by its id. A queued, scheduled or retrying job is removed at once: it never
    /// runs (again), counts as <see cref="WorkQueueTotals.Canceled"/>, and its idempotency key is free. A running job's
    /// <see cref="CancellationToken"/> is cancelled; if the job honours it (throws <see cref="OperationCanceledException"/>)
    /// it ends <see cref="JobState.Canceled"/>, otherwise it ends as it would have and is not retried, and a warning is logged.
    /// </summary>
    /// <remarks>
    /// Only tracked jobs can be cancelled (see <see cref="GetJob(string)"/>). A cancelled queued job leaves the queue's
    /// channel when a thread next reaches it, without running: until then it still takes one of the
    /// <see cref="WorkQueueOptions.Capacity"/> slots (a paused queue frees them when it resumes). A durable queue
    /// answers <see cref="JobCancelOutcome.NotFound"/>.
    /// </remarks>
    /// <param name="jobId">The job's id.</param>
    /// <returns>What the cancel did, and the job as it was left.</returns>
    JobCancelResult Cancel(string jobId);

    /// <summary>
    /// Finds one page of an in-memory queue's tracked jobs (see <see cref="GetJob(string)"/> for which jobs are tracked):
    /// by state, by text in the job's name or last error, newest first, continued with the page's
    /// <see cref="JobPage.Next"/> cursor.
    /// </summary>
    /// <remarks>
    /// <para>
    /// Jobs in flight come first, latest accepted first, then ended jobs, latest ending first. A filter on ended states
    /// reads a per-state index of the ended jobs; anything else (a text filter, jobs in flight) reads at most
    /// <see cref="JobQuery.ScanLimit"/> jobs per page and returns a cursor where it stopped.
    /// </para>
    /// <para>
    /// A page is read while jobs move: a job that ends between two pages may appear on both or on neither. A durable queue
    /// returns an empty page.
    /// </para>
    /// </remarks>
    /// <param name="query">What to find.</param>
    /// <returns>The page.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="query"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><see cref="JobQuery.Limit"/> or <see cref="JobQuery.ScanLimit"/> is out of range.</exception>
    /// <exception cref="ArgumentException">A text is empty or too long, a state is not defined, or the cursor is not one a page returned.</exception>
    JobPage FindJobs(JobQuery query);
}
