namespace WorkQueue.AspNetCore;

/// <summary>
/// Enqueues jobs on a durable queue: each job is stored in Redis before <see cref="EnqueueAsync(TPayload, CancellationToken)"/> completes, runs at
/// least once on one of the instances that consume the queue, and survives a crash of any of them.
/// </summary>
/// <remarks>
/// <para>
/// Resolve it by the queue's name (<c>[FromKeyedServices("sms")] IDurableQueue&lt;SmsRequest&gt;</c>), or without a key
/// when one durable queue has that payload type. Handlers must be idempotent: a job whose instance crashed is run again by
/// another, and ordering is not guaranteed across instances.
/// </para>
/// <para>
/// Durable jobs are payloads for the queue's handler, never delegates: a delegate cannot be stored. There is no
/// <c>TryEnqueue</c>: a job is accepted only once Redis has it.
/// </para>
/// </remarks>
/// <typeparam name="TPayload">The payload type, written as JSON.</typeparam>
public interface IDurableQueue<in TPayload>
{
    /// <summary>Gets the queue's name.</summary>
    string Name { get; }

    // RS0026: the EnqueueAsync overloads differ by JobOptions before the optional token, so no call binds to both.
#pragma warning disable RS0026
    /// <summary>
    /// Stores a job in the queue's Redis stream. Concurrent calls are sent together in pipelined batches.
    /// </summary>
    /// <param name="payload">The payload.</param>
    /// <param name="cancellationToken">Cancels the wait for space when the queue is full in <see cref="QueueFullMode.Wait"/> mode.</param>
    /// <returns>The job's id in the stream.</returns>
    /// <exception cref="JobRejectedException">
    /// The queue is full and rejecting (or the wait for space passed <see cref="WorkQueueOptions.EnqueueTimeout"/>), or
    /// Redis could not be reached (<see cref="RejectionReason.StoreUnavailable"/>, with the cause as the inner exception).
    /// </exception>
    /// <exception cref="EnqueueOutcomeUnknownException">
    /// The job was sent but Redis's answer never came (a timeout, a dropped connection): it may or may not be stored.
    /// </exception>
    /// <exception cref="EnqueueNotReplicatedException">
    /// With <see cref="DurableQueueOptions.ReplicaAcknowledgements"/>: the job is stored on the primary (and runs), but
    /// fewer replicas confirmed having it within <see cref="DurableQueueOptions.ReplicaAcknowledgementTimeout"/>.
    /// </exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled before Redis had the job.</exception>
    ValueTask<string> EnqueueAsync(TPayload payload, CancellationToken cancellationToken = default);

    /// <summary>
    /// Stores a job in Redis with <paramref name="options"/>: an idempotency key, and optionally a delay or a time to run
    /// at (as <c>ScheduleAsync</c>).
    /// </summary>
    /// <remarks>
    /// <para>
    /// While a job enqueued on this queue with the same <see cref="JobOptions.IdempotencyKey"/> is queued, scheduled,
    /// running or waiting for a retry, on any instance (and, when <see cref="WorkQueueOptions.IdempotencyKeyRetention"/> is
    /// set, for that long after it succeeded), this enqueue stores nothing and returns that job's id with
    /// <see cref="EnqueueResult.Created"/> <see langword="false"/>. The check and the store are one Redis script,
    /// so concurrent enqueues of one key, from any number of instances, store exactly one job and all learn its id.
    /// </para>
    /// <para>
    /// The key moves with its job (retries, hand-backs, a dead instance's job reclaimed by another) and is released when
    /// the job succeeds (after the retention), is dead-lettered (so the work can be submitted again), or its schedule is
    /// cancelled. A key whose job was removed from Redis by other means does not block: the next enqueue with it finds
    /// the job gone and takes the key. An enqueue whose key is held is answered even when the queue is full.
    /// </para>
    /// </remarks>
    /// <param name="payload">The payload.</param>
    /// <param name="options">The key and time; see <see cref="JobOptions"/>.</param>
    /// <param name="cancellationToken">Cancels the wait for space when the queue is full in <see cref="QueueFullMode.Wait"/> mode.</param>
    /// <returns>The new job's id and <see langword="true"/>, or the id of the job that holds the key and <see langword="false"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="options"/> is not valid: an empty key, one longer than <see cref="JobOptions.MaxKeyLength"/> or with control characters, both a delay and a time (the message names the setting).</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="options"/> has a delay longer than 100 years.</exception>
    /// <exception cref="JobRejectedException">As <see cref="EnqueueAsync(TPayload, CancellationToken)"/>.</exception>
    /// <exception cref="EnqueueOutcomeUnknownException">
    /// As <see cref="EnqueueAsync(TPayload, CancellationToken)"/>; enqueuing again with the same key is safe: it stores at
    /// most one job, and answers the stored one's id.
    /// </exception>
    /// <exception cref="EnqueueNotReplicatedException">As <see cref="EnqueueAsync(TPayload, CancellationToken)"/>; its job id is the holder's when the key was held.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled before Redis had the job.</exception>
    ValueTask<EnqueueResult> EnqueueAsync(TPayload payload, JobOptions options, CancellationToken cancellationToken = default);
#pragma warning restore RS0026

    // RS0026: the ScheduleAsync overloads differ by the type of their second argument (a delay or a time), before the
    // optional token, so no call can bind to both.
#pragma warning disable RS0026
    /// <summary>
    /// Stores a job in Redis that becomes ready to run once <paramref name="delay"/> has passed on Redis's clock.
    /// </summary>
    /// <remarks>
    /// <para>
    /// The job waits in the queue's delayed set (where retries wait), under its own id, and counts toward the queue's
    /// <see cref="WorkQueueOptions.Capacity"/> from now on, as every job stored in Redis does (capacity bounds what Redis
    /// holds for the queue). When it is due, the next fetch of any instance moves it to the stream; consumers sleep until
    /// the earliest due time instead of polling, and every enqueue nudges them to look again. It survives restarts of
    /// every instance, and can be cancelled by id until it is due.
    /// </para>
    /// </remarks>
    /// <param name="payload">The payload.</param>
    /// <param name="delay">How long from now; zero or negative stores the job ready to run now.</param>
    /// <param name="cancellationToken">Cancels the wait for space when the queue is full in <see cref="QueueFullMode.Wait"/> mode.</param>
    /// <returns>The job's id (<c>s{ms}-{n}</c> for a job that waits; a stream id for one stored ready).</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="delay"/> is longer than 100 years.</exception>
    /// <exception cref="JobRejectedException">As <see cref="EnqueueAsync(TPayload, CancellationToken)"/>.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled before Redis had the job.</exception>
    ValueTask<string> ScheduleAsync(TPayload payload, TimeSpan delay, CancellationToken cancellationToken = default);

    /// <summary>
    /// Stores a job in Redis that becomes ready to run at <paramref name="runAt"/> by Redis's clock (see
    /// <see cref="ScheduleAsync(TPayload, TimeSpan, CancellationToken)"/>); a time that has passed stores it ready now.
    /// </summary>
    /// <param name="payload">The payload.</param>
    /// <param name="runAt">When the job becomes ready to run. Redis's clock decides, so a skew between this machine's clock and Redis's moves it by that much.</param>
    /// <param name="cancellationToken">Cancels the wait for space when the queue is full in <see cref="QueueFullMode.Wait"/> mode.</param>
    /// <returns>The job's id.</returns>
    /// <exception cref="JobRejectedException">As <see cref="EnqueueAsync(TPayload, CancellationToken)"/>.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled before Redis had the job.</exception>
    ValueTask<string> ScheduleAsync(TPayload payload, DateTimeOffset runAt, CancellationToken cancellationToken = default);
#pragma warning restore RS0026

    /// <summary>
    /// Cancels a scheduled job that has not come due: it is removed from Redis and will not run, on any instance.
    /// </summary>
    /// <param name="jobId">The id <c>ScheduleAsync</c> returned.</param>
    /// <param name="cancellationToken">Cancels the wait for Redis's answer (the cancel may still happen).</param>
    /// <returns><see langword="true"/> if the job was waiting and is now removed; <see langword="false"/> if no such job waits (unknown, already due, or cancelled).</returns>
    /// <exception cref="ArgumentException"><paramref name="jobId"/> is empty or not a durable job id (<c>{ms}-{seq}</c> or <c>s{ms}-{n}</c>, each number from 0 to 2^64-1 as Redis writes it, without leading zeros).</exception>
    /// <exception cref="JobRejectedException">Redis could not be reached (<see cref="RejectionReason.StoreUnavailable"/>).</exception>
    ValueTask<bool> CancelScheduledAsync(string jobId, CancellationToken cancellationToken = default);

    /// <summary>
    /// Reads a job's status from Redis: where it is now (queued, scheduled, running on which consumer, waiting for a retry)
    /// on any instance, or how it ended, with its attempts.
    /// </summary>
    /// <remarks>
    /// Live states are read from where the job is, so they cost nothing per job. An ended job is found for
    /// <see cref="WorkQueueOptions.FinishedJobRetention"/> after it ended (at most <see cref="WorkQueueOptions.MaxFinishedJobs"/>
    /// ended jobs of each ending, the oldest forgotten first), until a running instance of the queue trims it (within
    /// its poll interval, at most its heartbeat interval, or its heartbeat interval while paused; with no instance running, the last ones stay until one starts); dead letters stay in the
    /// dead-letter stream regardless.
    /// </remarks>
    /// <param name="jobId">
    /// The id <c>EnqueueAsync</c> or <c>ScheduleAsync</c> returned; or the stream id of a later entry of the job (its retry,
    /// a hand-back) while that entry is in the stream, which names the same job (the answer carries the job's own id).
    /// </param>
    /// <param name="cancellationToken">Cancels the wait for Redis's answer.</param>
    /// <returns>The job's status, or <see langword="null"/> when Redis knows no such job (unknown, or ended longer ago than the retention).</returns>
    /// <exception cref="ArgumentException"><paramref name="jobId"/> is empty or not a durable job id (<c>{ms}-{seq}</c> or <c>s{ms}-{n}</c>, each number from 0 to 2^64-1 as Redis writes it, without leading zeros).</exception>
    /// <exception cref="JobRejectedException">Redis could not be reached (<see cref="RejectionReason.StoreUnavailable"/>).</exception>
    ValueTask<JobStatus?> GetJobAsync(string jobId, CancellationToken cancellationToken = default);

    /// <summary>
    /// Cancels a job by id, wherever it is: a queued, scheduled or retrying job is removed from Redis (its idempotency key
    /// freed) and ends <see cref="JobState.Canceled"/>; a job delivered to a consumer, on any instance, has its
    /// <see cref="CancellationToken"/> fired there (or, still in that consumer's prefetch, never starts).
    /// </summary>
    /// <remarks>
    /// A running job that honours its token (throws <see cref="OperationCanceledException"/>) ends cancelled; one that
    /// ignores it ends as it ends (succeeded, or dead-lettered without a retry), with <see cref="JobStatus.CancelIgnored"/>
    /// and a warning logged where it ran. The cancel reaches a running job over Redis pub/sub: an instance that is not
    /// subscribed at that moment (its connection is being restored) does not see it, and its job runs to its end.
    /// </remarks>
    /// <param name="jobId">
    /// The id <c>EnqueueAsync</c> or <c>ScheduleAsync</c> returned; or the stream id of a later entry of the job (its retry,
    /// a hand-back) while that entry is in the stream, which names the same job (the answer carries the job's own id).
    /// </param>
    /// <param name="cancellationToken">Cancels the wait for Redis's answer (the cancel may still happen).</param>
    /// <returns>What the cancel did, and the job's status after it.</returns>
    /// <exception cref="ArgumentException"><paramref name="jobId"/> is empty or not a durable job id (<c>{ms}-{seq}</c> or <c>s{ms}-{n}</c>, each number from 0 to 2^64-1 as Redis writes it, without leading zeros).</exception>
    /// <exception cref="JobRejectedException">Redis could not be reached (<see cref="RejectionReason.StoreUnavailable"/>).</exception>
    ValueTask<JobCancelResult> CancelAsync(string jobId, CancellationToken cancellationToken = default);

    /// <summary>
    /// Finds a page of this queue's jobs in Redis: those in <see cref="JobQuery.States"/> (all when empty) whose last
    /// error contains <see cref="JobQuery.ErrorContains"/>, after <see cref="JobQuery.Cursor"/>.
    /// </summary>
    /// <remarks>
    /// <para>
    /// The order: queued and running jobs from the stream (latest enqueued first), then scheduled and retrying ones from
    /// the delayed set (soonest due first), then ended ones, for <see cref="WorkQueueOptions.FinishedJobRetention"/> and
    /// at most <see cref="WorkQueueOptions.MaxFinishedJobs"/> of each ending: succeeded, dead-lettered, cancelled, each
    /// latest ending first. A page reads each list where the cursor left it, so jobs that end while pages are turned
    /// (newer than the cursor) neither shift nor repeat the pages.
    /// </para>
    /// <para>
    /// A durable queue has one job type: <see cref="JobQuery.NameContains"/> either matches its handler's name (every
    /// job) or not (an empty page). Text is matched case-insensitively (ASCII letters). A text search reads at most
    /// <see cref="JobQuery.ScanLimit"/> entries per page, in script calls of at most 10,000 entries each (Redis runs
    /// nothing else during one), and returns the cursor where it stopped.
    /// </para>
    /// </remarks>
    /// <param name="query">The search; <see langword="null"/> fields match every job.</param>
    /// <param name="cancellationToken">Cancels the wait for Redis's answer.</param>
    /// <returns>The page, with the cursor of the next one.</returns>
    /// <exception cref="ArgumentException"><paramref name="query"/> has an out-of-range field, or a cursor no page of a durable queue returned.</exception>
    /// <exception cref="JobRejectedException">Redis could not be reached (<see cref="RejectionReason.StoreUnavailable"/>).</exception>
    ValueTask<JobPage> FindJobsAsync(JobQuery query, CancellationToken cancellationToken = default);
}
