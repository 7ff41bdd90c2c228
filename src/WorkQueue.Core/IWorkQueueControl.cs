namespace WorkQueue;

/// <summary>
/// Controls one queue: snapshots, dead letters, worker count, pause and stop. Reached through
/// <see cref="IWorkQueueProvider"/>; the producer side, with reading and cancelling jobs by id, is <see cref="IWorkQueue"/>.
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
}
