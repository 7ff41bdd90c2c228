namespace WorkQueue;

/// <summary>
/// A named, bounded queue of background jobs served by its own capped pool of dedicated worker threads.
/// </summary>
/// <remarks>
/// <para>
/// Jobs never run on the enqueuing thread and never on the CLR thread pool: each worker is a dedicated thread with its
/// own single-threaded synchronization context, so the awaits of an async job resume on its worker and <c>N</c> workers
/// mean at most <c>N</c> jobs in flight. (An await with <c>ConfigureAwait(false)</c> inside a job opts out of that and
/// resumes on the thread pool.)
/// </para>
/// <para>
/// Every accepted job is run, retried, dead-lettered, dropped (<see cref="QueueFullMode.DropOldest"/>, reported), or
/// reported by <see cref="StopAsync(TimeSpan, CancellationToken)"/>.
/// </para>
/// </remarks>
public interface IWorkQueue
{
    /// <summary>Gets the queue's name.</summary>
    string Name { get; }

    /// <summary>
    /// Enqueues a synchronous job without waiting.
    /// </summary>
    /// <param name="job">The job. It may block: it blocks only its worker.</param>
    /// <returns><see langword="true"/> if the job was accepted; <see langword="false"/> if the queue is full or stopped.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="job"/> is <see langword="null"/>.</exception>
    bool TryEnqueue(Action<CancellationToken> job);

    /// <summary>
    /// Enqueues an asynchronous job without waiting.
    /// </summary>
    /// <param name="job">The job.</param>
    /// <returns><see langword="true"/> if the job was accepted; <see langword="false"/> if the queue is full or stopped.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="job"/> is <see langword="null"/>.</exception>
    bool TryEnqueue(Func<CancellationToken, ValueTask> job);

    /// <summary>
    /// Enqueues a payload for a handler instance without waiting. Allocates nothing for a reference-type payload.
    /// </summary>
    /// <typeparam name="TPayload">The payload type.</typeparam>
    /// <param name="handler">The handler that runs the job.</param>
    /// <param name="payload">The payload.</param>
    /// <returns><see langword="true"/> if the job was accepted; <see langword="false"/> if the queue is full or stopped.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handler"/> is <see langword="null"/>.</exception>
    bool TryEnqueue<TPayload>(IJobHandler<TPayload> handler, TPayload payload);

    /// <summary>
    /// Enqueues a payload for a <typeparamref name="THandler"/> that is resolved from a new service scope when the job
    /// runs (and disposed with it), without waiting. Allocates nothing for a reference-type payload.
    /// </summary>
    /// <typeparam name="THandler">The handler type; registered services are used, otherwise it is created with its dependencies.</typeparam>
    /// <typeparam name="TPayload">The payload type.</typeparam>
    /// <param name="payload">The payload.</param>
    /// <returns><see langword="true"/> if the job was accepted; <see langword="false"/> if the queue is full or stopped.</returns>
    bool TryEnqueue<THandler, TPayload>(TPayload payload)
        where THandler : class, IJobHandler<TPayload>;

    /// <summary>
    /// Enqueues a synchronous job, waiting for space if the queue is full and in <see cref="QueueFullMode.Wait"/> mode.
    /// </summary>
    /// <param name="job">The job.</param>
    /// <param name="cancellationToken">Cancels the wait for space.</param>
    /// <returns>A task that completes when the job is accepted.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="job"/> is <see langword="null"/>.</exception>
    /// <exception cref="JobRejectedException">The queue is stopped, or full and rejecting, or the wait timed out.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled first.</exception>
    ValueTask EnqueueAsync(Action<CancellationToken> job, CancellationToken cancellationToken = default);

    /// <summary>
    /// Enqueues an asynchronous job, waiting for space if the queue is full and in <see cref="QueueFullMode.Wait"/> mode.
    /// </summary>
    /// <param name="job">The job.</param>
    /// <param name="cancellationToken">Cancels the wait for space.</param>
    /// <returns>A task that completes when the job is accepted.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="job"/> is <see langword="null"/>.</exception>
    /// <exception cref="JobRejectedException">The queue is stopped, or full and rejecting, or the wait timed out.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled first.</exception>
    ValueTask EnqueueAsync(Func<CancellationToken, ValueTask> job, CancellationToken cancellationToken = default);

    /// <summary>
    /// Enqueues a payload for a handler instance, waiting for space if the queue is full and in
    /// <see cref="QueueFullMode.Wait"/> mode.
    /// </summary>
    /// <typeparam name="TPayload">The payload type.</typeparam>
    /// <param name="handler">The handler that runs the job.</param>
    /// <param name="payload">The payload.</param>
    /// <param name="cancellationToken">Cancels the wait for space.</param>
    /// <returns>A task that completes when the job is accepted.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handler"/> is <see langword="null"/>.</exception>
    /// <exception cref="JobRejectedException">The queue is stopped, or full and rejecting, or the wait timed out.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled first.</exception>
    ValueTask EnqueueAsync<TPayload>(IJobHandler<TPayload> handler, TPayload payload, CancellationToken cancellationToken = default);

    /// <summary>
    /// Enqueues a payload for a scoped <typeparamref name="THandler"/>, waiting for space if the queue is full and in
    /// <see cref="QueueFullMode.Wait"/> mode.
    /// </summary>
    /// <typeparam name="THandler">The handler type, resolved from a new service scope when the job runs.</typeparam>
    /// <typeparam name="TPayload">The payload type.</typeparam>
    /// <param name="payload">The payload.</param>
    /// <param name="cancellationToken">Cancels the wait for space.</param>
    /// <returns>A task that completes when the job is accepted.</returns>
    /// <exception cref="JobRejectedException">The queue is stopped, or full and rejecting, or the wait timed out.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled first.</exception>
    ValueTask EnqueueAsync<THandler, TPayload>(TPayload payload, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload>;

    /// <summary>
    /// Gets a point-in-time view of the queue: depth, workers, totals and recent latencies.
    /// </summary>
    /// <returns>The snapshot.</returns>
    WorkQueueSnapshot GetSnapshot();

    /// <summary>
    /// Gets the most recent dead-lettered jobs (up to <see cref="WorkQueueOptions.DeadLetterCapacity"/>), oldest first.
    /// </summary>
    /// <returns>The dead-lettered jobs.</returns>
    IReadOnlyList<DeadLetteredJob> GetDeadLetters();

    /// <summary>
    /// Sets a manual worker count that holds until <see cref="UseAutoScaling"/> is called. Growing starts workers now;
    /// shrinking retires idle workers now and busy workers when their current job ends.
    /// </summary>
    /// <param name="count">The number of workers, from 1 to <see cref="WorkQueueOptions.MaxWorkers"/>.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="count"/> is below 1 or above the queue's <c>MaxWorkers</c>.</exception>
    void SetWorkerCount(int count);

    /// <summary>
    /// Hands the worker count back to the autoscaler.
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
    /// Stops accepting jobs, lets queued, running and retrying jobs finish until the drain timeout (or
    /// <paramref name="cancellationToken"/>), then cancels what is left and reports every job that did not complete.
    /// Calling it again returns the same report.
    /// </summary>
    /// <param name="drainTimeout">How long to let jobs finish, or <see cref="Timeout.InfiniteTimeSpan"/> to rely on the token.</param>
    /// <param name="cancellationToken">Ends the drain early, as the host's shutdown timeout does.</param>
    /// <returns>The shutdown report.</returns>
    Task<ShutdownReport> StopAsync(TimeSpan drainTimeout, CancellationToken cancellationToken = default);
}
