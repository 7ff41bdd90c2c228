using System.Diagnostics.CodeAnalysis;

namespace WorkQueue;

/// <summary>
/// Enqueues, schedules, reads and cancels background jobs on a named queue, in memory or durable: the producer
/// interface every queue implements. Jobs are payloads for typed handlers only.
/// </summary>
/// <remarks>
/// <para>
/// This is the producer side, the one to inject where work is enqueued. Code written against it compiles and behaves
/// the same whether the queue keeps its jobs in memory or in a store, so a queue moves to a store by changing its
/// declaration, not its producers. Delegates, handler instances and <c>TryEnqueue</c> are on
/// <see cref="IInMemoryWorkQueue"/>: a store cannot keep a delegate, nor answer synchronously. Pausing, resizing,
/// stopping and snapshots are on <see cref="IWorkQueueControl"/>, reached through <see cref="IWorkQueueProvider"/>, so
/// code that only enqueues cannot stop a queue.
/// </para>
/// <para>
/// Jobs never run on the enqueuing thread and never on the CLR thread pool: they start on the queue's dedicated
/// threads, and the awaits of an async job resume on those threads (any of them), so a job that blocks holds one of
/// the queue's threads, never a pool thread. (An await with <c>ConfigureAwait(false)</c> inside a job opts out of
/// that and resumes on the thread pool.)
/// </para>
/// <para>
/// Every accepted job is run, retried, dead-lettered, dropped (<see cref="QueueFullMode.DropOldest"/>, reported), or
/// reported by <see cref="IWorkQueueControl.StopAsync(TimeSpan, CancellationToken)"/>. An in-memory queue completes
/// the calls that need no wait (scheduling, reading, cancelling) synchronously.
/// </para>
/// </remarks>
public interface IWorkQueue
{
    /// <summary>Gets the queue's name.</summary>
    string Name { get; }

    // RS0026: the EnqueueAsync overloads differ by JobOptions before the optional CancellationToken (last, as
    // ChannelWriter<T>.WriteAsync takes it), so no call can bind to both.
#pragma warning disable RS0026
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
    ValueTask EnqueueAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload>;

    /// <summary>
    /// Enqueues a payload for a scoped <typeparamref name="THandler"/> with <paramref name="options"/>: an idempotency key
    /// (no second job while one with the key is unfinished), and optionally a time to run at.
    /// </summary>
    /// <typeparam name="THandler">The handler type, resolved from a new service scope when the job runs.</typeparam>
    /// <typeparam name="TPayload">The payload type.</typeparam>
    /// <param name="payload">The payload.</param>
    /// <param name="options">The key and time; see <see cref="JobOptions"/>.</param>
    /// <param name="cancellationToken">Cancels the wait for space.</param>
    /// <returns>The job's id and whether it was added, or the id of the job that holds the key.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> is not valid (the message names the setting).</exception>
    /// <exception cref="JobRejectedException">
    /// The queue is stopped, or full and rejecting, or the wait timed out; with a time to run at, it holds its
    /// <see cref="WorkQueueOptions.MaxScheduledJobs"/>. A refusal is the returned task's exception, never thrown by the call.
    /// </exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled first.</exception>
    ValueTask<EnqueueResult> EnqueueAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, JobOptions options, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload>;
#pragma warning restore RS0026

    // RS0026: the ScheduleAsync overloads differ by the type of their second argument (a delay or a time), before the
    // optional token, so no call can bind to both.
#pragma warning disable RS0026
    /// <summary>
    /// Schedules a payload for a scoped <typeparamref name="THandler"/> to run once <paramref name="delay"/> has passed.
    /// </summary>
    /// <typeparam name="THandler">The handler type, resolved from a new service scope when the job runs.</typeparam>
    /// <typeparam name="TPayload">The payload type.</typeparam>
    /// <param name="payload">The payload.</param>
    /// <param name="delay">How long from now; zero or negative runs the job now.</param>
    /// <param name="cancellationToken">Cancels a wait (for a store's answer); an in-memory queue does not wait.</param>
    /// <returns>The job's id, for <see cref="CancelScheduledAsync(string, CancellationToken)"/>.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="delay"/> reaches past <see cref="DateTimeOffset.MaxValue"/>.</exception>
    /// <exception cref="JobRejectedException">The queue is stopping, or holds its <see cref="WorkQueueOptions.MaxScheduledJobs"/>.</exception>
    ValueTask<string> ScheduleAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, TimeSpan delay, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload>;

    /// <summary>
    /// Schedules a payload for a scoped <typeparamref name="THandler"/> to run at <paramref name="runAt"/>.
    /// </summary>
    /// <remarks>
    /// <para>
    /// In memory, a scheduled job waits without a timer of its own (one timer serves every scheduled job of the engine)
    /// and without taking room in <see cref="WorkQueueOptions.Capacity"/>; it counts against
    /// <see cref="WorkQueueOptions.MaxScheduledJobs"/>. When it comes due it goes to the queue's threads ahead of the
    /// jobs already queued (it was accepted already, so it is never refused or dropped then); a paused queue holds it
    /// until it resumes. It counts as enqueued (and unfinished) from the moment it is scheduled.
    /// </para>
    /// <para>
    /// A time in the past runs the job now. When an in-memory queue stops, jobs that have not come due are reported in
    /// the <see cref="ShutdownReport"/> with <see cref="AbandonReason.NotDue"/> at once; the stop does not wait for them.
    /// They live in this process only: for jobs that must survive a restart, use a durable queue.
    /// </para>
    /// </remarks>
    /// <typeparam name="THandler">The handler type, resolved from a new service scope when the job runs.</typeparam>
    /// <typeparam name="TPayload">The payload type.</typeparam>
    /// <param name="payload">The payload.</param>
    /// <param name="runAt">When the job becomes ready to run, on the engine's <see cref="TimeProvider"/>; a time in the past runs it now.</param>
    /// <param name="cancellationToken">Cancels a wait (for a store's answer); an in-memory queue does not wait.</param>
    /// <returns>The job's id, for <see cref="CancelScheduledAsync(string, CancellationToken)"/>.</returns>
    /// <exception cref="JobRejectedException">The queue is stopping, or holds its <see cref="WorkQueueOptions.MaxScheduledJobs"/>.</exception>
    ValueTask<string> ScheduleAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, DateTimeOffset runAt, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload>;
#pragma warning restore RS0026

    /// <summary>
    /// Cancels a scheduled job that has not come due: it will not run, and it counts as
    /// <see cref="WorkQueueTotals.Canceled"/>.
    /// </summary>
    /// <param name="jobId">The id that <c>ScheduleAsync</c> (or <c>Schedule</c>) returned.</param>
    /// <param name="cancellationToken">Cancels a wait (for a store's answer); an in-memory queue does not wait.</param>
    /// <returns>
    /// <see langword="true"/> if the job was waiting and is now cancelled; <see langword="false"/> if this queue holds no
    /// such scheduled job (unknown id, already due and handed to the threads, cancelled, or the queue stopped).
    /// </returns>
    /// <exception cref="ArgumentNullException"><paramref name="jobId"/> is <see langword="null"/>.</exception>
    ValueTask<bool> CancelScheduledAsync(string jobId, CancellationToken cancellationToken = default);

    /// <summary>
    /// Gets a job by its id: where it is (queued, scheduled, running, retrying) or how it ended.
    /// </summary>
    /// <remarks>
    /// <para>
    /// An in-memory queue tracks the jobs whose id it handed out: those enqueued with <see cref="JobOptions"/>
    /// (<see cref="EnqueueResult.JobId"/>) and scheduled ones (<c>ScheduleAsync</c>, recurring occurrences), or every
    /// job when <see cref="WorkQueueOptions.TrackAllJobs"/> is set. Other jobs are not tracked, so that path costs
    /// nothing more; for those this returns <see langword="null"/>. An ended job is kept for
    /// <see cref="WorkQueueOptions.FinishedJobRetention"/>, up to <see cref="WorkQueueOptions.MaxFinishedJobs"/> of them.
    /// </para>
    /// </remarks>
    /// <param name="jobId">The job's id.</param>
    /// <param name="cancellationToken">Cancels a wait (for a store's answer); an in-memory queue does not wait.</param>
    /// <returns>The job's status, or <see langword="null"/> if the queue knows no such job (unknown, untracked, or ended longer ago than the retention).</returns>
    /// <exception cref="ArgumentNullException"><paramref name="jobId"/> is <see langword="null"/>.</exception>
    ValueTask<JobStatus?> GetJobAsync(string jobId, CancellationToken cancellationToken = default);

    /// <summary>
    /// Cancels a job by its id. A queued, scheduled or retrying job is removed at once: it never runs (again), counts as
    /// <see cref="WorkQueueTotals.Canceled"/>, and its idempotency key is free. A running job's
    /// <see cref="CancellationToken"/> is cancelled; if the job honours it (throws <see cref="OperationCanceledException"/>)
    /// it ends <see cref="JobState.Canceled"/>, otherwise it ends as it would have and is not retried, and a warning is logged.
    /// </summary>
    /// <remarks>
    /// Only tracked jobs can be cancelled (see <see cref="GetJobAsync(string, CancellationToken)"/>). In memory, a
    /// cancelled queued job leaves the queue's channel when a thread next reaches it, without running: until then it
    /// still takes one of the <see cref="WorkQueueOptions.Capacity"/> slots (a paused queue frees them when it resumes).
    /// </remarks>
    /// <param name="jobId">The job's id.</param>
    /// <param name="cancellationToken">Cancels a wait (for a store's answer); an in-memory queue does not wait.</param>
    /// <returns>What the cancel did, and the job as it was left.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="jobId"/> is <see langword="null"/>.</exception>
    ValueTask<JobCancelResult> CancelAsync(string jobId, CancellationToken cancellationToken = default);

    /// <summary>
    /// Finds one page of the queue's tracked jobs (see <see cref="GetJobAsync(string, CancellationToken)"/> for which jobs
    /// are tracked): by state, by text in the job's name or last error, newest first, continued with the page's
    /// <see cref="JobPage.Next"/> cursor.
    /// </summary>
    /// <remarks>
    /// <para>
    /// In memory, jobs in flight come first, latest accepted first, then ended jobs, latest ending first. A filter on
    /// ended states reads a per-state index of the ended jobs; anything else (a text filter, jobs in flight) reads at
    /// most <see cref="JobQuery.ScanLimit"/> jobs per page and returns a cursor where it stopped.
    /// </para>
    /// <para>
    /// A page is read while jobs move: a job that ends between two pages may appear on both or on neither.
    /// </para>
    /// </remarks>
    /// <param name="query">What to find.</param>
    /// <param name="cancellationToken">Cancels a wait (for a store's answer); an in-memory queue does not wait.</param>
    /// <returns>The page.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="query"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><see cref="JobQuery.Limit"/> or <see cref="JobQuery.ScanLimit"/> is out of range.</exception>
    /// <exception cref="ArgumentException">A text is empty or too long, a state is not defined, or the cursor is not one a page returned.</exception>
    ValueTask<JobPage> FindJobsAsync(JobQuery query, CancellationToken cancellationToken = default);
}
