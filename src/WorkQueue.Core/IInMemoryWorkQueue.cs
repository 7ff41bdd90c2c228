using System.Diagnostics.CodeAnalysis;

namespace WorkQueue;

/// <summary>
/// Enqueues background jobs on an in-memory queue: everything <see cref="IWorkQueue"/> does, plus the jobs only a queue
/// in this process can take (delegates, handler instances) and answers only it can give synchronously.
/// </summary>
/// <remarks>
/// <para>
/// These members are apart from <see cref="IWorkQueue"/> because a durable queue cannot offer them. A delegate or a
/// handler instance cannot be stored: another process cannot run it after a restart. <c>TryEnqueue</c> answers
/// synchronously whether the job was accepted, which a store cannot do: it cannot know Redis has the job without a
/// round trip. So moving a queue to a store (resolving it as <see cref="IWorkQueue"/>) is a compile error at exactly
/// the calls that cannot move, not a surprise at run time; typed-handler calls through <see cref="IWorkQueue"/> move
/// unchanged.
/// </para>
/// <para>
/// Reached as <see cref="IInMemoryWorkQueue"/> (the default queue, or keyed by the queue's name) or through
/// <see cref="IWorkQueueProvider.GetInMemoryQueue(string)"/>, which refuses a durable queue. Jobs never run on the
/// enqueuing thread and never on the CLR thread pool (see <see cref="IWorkQueue"/>).
/// </para>
/// </remarks>
public interface IInMemoryWorkQueue : IWorkQueue
{
    /// <summary>
    /// Enqueues a synchronous job without waiting.
    /// </summary>
    /// <param name="job">The job. It may block, even on async code (<c>.Result</c>): it blocks only its own thread.</param>
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
    bool TryEnqueue<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload)
        where THandler : class, IJobHandler<TPayload>;

    // RS0026: the EnqueueAsync overloads (these and IWorkQueue's) differ by the kind of job, and JobOptions comes before
    // the optional CancellationToken (last, as ChannelWriter<T>.WriteAsync takes it), so no call can bind to two of them.
#pragma warning disable RS0026
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
    /// Enqueues a payload for a handler instance with <paramref name="options"/>: an idempotency key (no second job while
    /// one with the key is unfinished), and optionally a time to run at.
    /// </summary>
    /// <typeparam name="TPayload">The payload type.</typeparam>
    /// <param name="handler">The handler that runs the job.</param>
    /// <param name="payload">The payload.</param>
    /// <param name="options">The key and time; see <see cref="JobOptions"/>.</param>
    /// <param name="cancellationToken">Cancels the wait for space.</param>
    /// <returns>The job's id and whether it was added, or the id of the job that holds the key.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handler"/> or <paramref name="options"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> is not valid (the message names the setting).</exception>
    /// <exception cref="JobRejectedException">The queue is stopped, or full and rejecting, or the wait timed out.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled first.</exception>
    ValueTask<EnqueueResult> EnqueueAsync<TPayload>(IJobHandler<TPayload> handler, TPayload payload, JobOptions options, CancellationToken cancellationToken = default);

#pragma warning restore RS0026

    /// <summary>
    /// Schedules a synchronous job to run once <paramref name="delay"/> has passed.
    /// </summary>
    /// <param name="job">The job.</param>
    /// <param name="delay">How long from now; zero or negative runs the job now.</param>
    /// <returns>The job's id, for <see cref="CancelScheduled"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="job"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="delay"/> reaches past <see cref="DateTimeOffset.MaxValue"/>.</exception>
    /// <exception cref="JobRejectedException">The queue is stopping, or holds its <see cref="WorkQueueOptions.MaxScheduledJobs"/>.</exception>
    string Schedule(Action<CancellationToken> job, TimeSpan delay);

    /// <summary>
    /// Schedules a synchronous job to run at <paramref name="runAt"/>.
    /// </summary>
    /// <remarks>
    /// <para>
    /// A scheduled job waits in memory without a timer of its own (one timer serves every scheduled job of the engine)
    /// and without taking room in <see cref="WorkQueueOptions.Capacity"/>; it counts against
    /// <see cref="WorkQueueOptions.MaxScheduledJobs"/>. When it comes due it goes to the queue's threads ahead of the
    /// jobs already queued (it was accepted already, so it is never refused or dropped then); a paused queue holds it
    /// until it resumes. It counts as enqueued (and unfinished) from the moment it is scheduled.
    /// </para>
    /// <para>
    /// A time in the past runs the job now. When the queue stops, jobs that have not come due are reported in the
    /// <see cref="ShutdownReport"/> with <see cref="AbandonReason.NotDue"/> at once; the stop does not wait for them.
    /// Scheduled jobs live in this process only: for jobs that must survive a restart, use a durable queue.
    /// </para>
    /// </remarks>
    /// <param name="job">The job.</param>
    /// <param name="runAt">When the job becomes ready to run, on the engine's <see cref="TimeProvider"/>.</param>
    /// <returns>The job's id, for <see cref="CancelScheduled"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="job"/> is <see langword="null"/>.</exception>
    /// <exception cref="JobRejectedException">The queue is stopping, or holds its <see cref="WorkQueueOptions.MaxScheduledJobs"/>.</exception>
    string Schedule(Action<CancellationToken> job, DateTimeOffset runAt);

    /// <summary>
    /// Schedules an asynchronous job to run once <paramref name="delay"/> has passed.
    /// </summary>
    /// <param name="job">The job.</param>
    /// <param name="delay">How long from now; zero or negative runs the job now.</param>
    /// <returns>The job's id, for <see cref="CancelScheduled"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="job"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="delay"/> reaches past <see cref="DateTimeOffset.MaxValue"/>.</exception>
    /// <exception cref="JobRejectedException">The queue is stopping, or holds its <see cref="WorkQueueOptions.MaxScheduledJobs"/>.</exception>
    string Schedule(Func<CancellationToken, ValueTask> job, TimeSpan delay);

    /// <summary>
    /// Schedules an asynchronous job to run at <paramref name="runAt"/> (see <see cref="Schedule(Action{CancellationToken}, DateTimeOffset)"/>).
    /// </summary>
    /// <param name="job">The job.</param>
    /// <param name="runAt">When the job becomes ready to run; a time in the past runs it now.</param>
    /// <returns>The job's id, for <see cref="CancelScheduled"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="job"/> is <see langword="null"/>.</exception>
    /// <exception cref="JobRejectedException">The queue is stopping, or holds its <see cref="WorkQueueOptions.MaxScheduledJobs"/>.</exception>
    string Schedule(Func<CancellationToken, ValueTask> job, DateTimeOffset runAt);

    /// <summary>
    /// Schedules a payload for a handler instance to run once <paramref name="delay"/> has passed.
    /// </summary>
    /// <typeparam name="TPayload">The payload type.</typeparam>
    /// <param name="handler">The handler that runs the job.</param>
    /// <param name="payload">The payload.</param>
    /// <param name="delay">How long from now; zero or negative runs the job now.</param>
    /// <returns>The job's id, for <see cref="CancelScheduled"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handler"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="delay"/> reaches past <see cref="DateTimeOffset.MaxValue"/>.</exception>
    /// <exception cref="JobRejectedException">The queue is stopping, or holds its <see cref="WorkQueueOptions.MaxScheduledJobs"/>.</exception>
    string Schedule<TPayload>(IJobHandler<TPayload> handler, TPayload payload, TimeSpan delay);

    /// <summary>
    /// Schedules a payload for a handler instance to run at <paramref name="runAt"/> (see <see cref="Schedule(Action{CancellationToken}, DateTimeOffset)"/>).
    /// </summary>
    /// <typeparam name="TPayload">The payload type.</typeparam>
    /// <param name="handler">The handler that runs the job.</param>
    /// <param name="payload">The payload.</param>
    /// <param name="runAt">When the job becomes ready to run; a time in the past runs it now.</param>
    /// <returns>The job's id, for <see cref="CancelScheduled"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handler"/> is <see langword="null"/>.</exception>
    /// <exception cref="JobRejectedException">The queue is stopping, or holds its <see cref="WorkQueueOptions.MaxScheduledJobs"/>.</exception>
    string Schedule<TPayload>(IJobHandler<TPayload> handler, TPayload payload, DateTimeOffset runAt);

    /// <summary>
    /// Schedules a payload for a scoped <typeparamref name="THandler"/> to run once <paramref name="delay"/> has passed.
    /// </summary>
    /// <typeparam name="THandler">The handler type, resolved from a new service scope when the job runs.</typeparam>
    /// <typeparam name="TPayload">The payload type.</typeparam>
    /// <param name="payload">The payload.</param>
    /// <param name="delay">How long from now; zero or negative runs the job now.</param>
    /// <returns>The job's id, for <see cref="CancelScheduled"/>.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="delay"/> reaches past <see cref="DateTimeOffset.MaxValue"/>.</exception>
    /// <exception cref="JobRejectedException">The queue is stopping, or holds its <see cref="WorkQueueOptions.MaxScheduledJobs"/>.</exception>
    string Schedule<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, TimeSpan delay)
        where THandler : class, IJobHandler<TPayload>;

    /// <summary>
    /// Schedules a payload for a scoped <typeparamref name="THandler"/> to run at <paramref name="runAt"/> (see <see cref="Schedule(Action{CancellationToken}, DateTimeOffset)"/>).
    /// </summary>
    /// <typeparam name="THandler">The handler type, resolved from a new service scope when the job runs.</typeparam>
    /// <typeparam name="TPayload">The payload type.</typeparam>
    /// <param name="payload">The payload.</param>
    /// <param name="runAt">When the job becomes ready to run; a time in the past runs it now.</param>
    /// <returns>The job's id, for <see cref="CancelScheduled"/>.</returns>
    /// <exception cref="JobRejectedException">The queue is stopping, or holds its <see cref="WorkQueueOptions.MaxScheduledJobs"/>.</exception>
    string Schedule<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, DateTimeOffset runAt)
        where THandler : class, IJobHandler<TPayload>;

    /// <summary>
    /// Cancels a scheduled job that has not come due: it will not run, and it counts as
    /// <see cref="WorkQueueTotals.Canceled"/>.
    /// </summary>
    /// <param name="jobId">The id that <c>Schedule</c> returned.</param>
    /// <returns>
    /// <see langword="true"/> if the job was waiting and is now cancelled; <see langword="false"/> if this queue holds no
    /// such scheduled job (unknown id, already due and handed to the threads, cancelled, or the queue stopped).
    /// </returns>
    bool CancelScheduled(string jobId);
}
