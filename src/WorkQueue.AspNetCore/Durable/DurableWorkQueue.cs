using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using WorkQueue.Telemetry;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The <see cref="IWorkQueue"/> of a durable queue, for every job type it carries: writes a payload as JSON in its job
/// type's envelope on the caller's thread, then hands it to the store; reads, cancels and finds jobs in Redis
/// (<see cref="RedisJobBrowser"/>).
/// </summary>
internal sealed class DurableWorkQueue : IWorkQueue
{
    /// <summary>The longest delay: Redis keeps due times as doubles of Unix ms, exact far beyond it.</summary>
    private static readonly TimeSpan MaxDelay = TimeSpan.FromDays(36_525);

    private readonly RedisStreamStore _store;
    private readonly RedisJobBrowser _jobs;
    private readonly WorkQueueMetrics? _metrics;
    private readonly KeyValuePair<string, object?> _metricTag;
    private readonly Func<string, EnqueueResult> _toResult;

    public DurableWorkQueue(RedisStreamStore store, RedisJobBrowser jobs, WorkQueueMetrics? metrics)
    {
        _store = store;
        _jobs = jobs;
        _metrics = metrics;
        _metricTag = new KeyValuePair<string, object?>(WorkQueueMetrics.QueueTag, store.QueueName);
        _toResult = ToResult;
    }

    public string Name => _store.QueueName;

    /// <summary>Gets the payload of a job of <typeparamref name="THandler"/> as the queue stores it.</summary>
    /// <exception cref="InvalidOperationException">No job type is registered for the handler and payload.</exception>
    public string Stored<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload)
        where THandler : class, IJobHandler<TPayload>
    {
        var type = _store.JobTypes.Of<THandler, TPayload>(_store.QueueName);
        return _store.JobTypes.Write(type, type.Write(payload), TraceParent());
    }

    public ValueTask EnqueueAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload>
    {
        // The store's task itself, not an async wrapper around it: the task completes on the store's thread (its
        // continuations run on the pool), so a caller that blocks on it (legacy code on a worker) is released while the
        // CLR thread pool is starved, where a wrapper's continuation would wait for a pool thread that never comes.
        var enqueue = _store.EnqueueAsync(Stored<THandler, TPayload>(payload), cancellationToken);
        return enqueue.IsCompletedSuccessfully ? ValueTask.CompletedTask : new ValueTask(enqueue.AsTask());
    }

    public ValueTask<EnqueueResult> EnqueueAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, JobOptions options, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload>
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate(nameof(options));
        return EnqueueStoredAsync(Stored<THandler, TPayload>(payload), options, cancellationToken);
    }

    /// <summary>Stores a payload already in its envelope with <paramref name="options"/> (validated by the caller).</summary>
    public ValueTask<EnqueueResult> EnqueueStoredAsync(string stored, JobOptions options, CancellationToken cancellationToken)
    {
        string spec = string.Empty;
        if (options.Delay is { } delay)
        {
            if (delay > MaxDelay)
            {
                throw new ArgumentOutOfRangeException(nameof(options), delay, $"JobOptions.Delay must be at most {MaxDelay.TotalDays:F0} days.");
            }

            spec = RedisStreamStore.DelaySpec(delay);
        }
        else if (options.RunAt is { } runAt)
        {
            spec = RedisStreamStore.AtSpec(runAt);
        }

        // The store reads its answer into the EnqueueResult as it completes the task, on its own thread: a continuation
        // here would wait for a pool thread, and a caller blocking on the enqueue would hang while the pool is starved.
        return _store.EnqueueAsync(stored, spec, options.IdempotencyKey, _toResult, cancellationToken);
    }

    public ValueTask<string> ScheduleAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, TimeSpan delay, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload> =>
        ScheduleStoredAsync(Stored<THandler, TPayload>(payload), delay, cancellationToken);

    public ValueTask<string> ScheduleAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, DateTimeOffset runAt, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload> =>
        _store.ScheduleAsync(Stored<THandler, TPayload>(payload), runAt, cancellationToken);

    /// <summary>Stores a payload already in its envelope to run after <paramref name="delay"/>.</summary>
    public ValueTask<string> ScheduleStoredAsync(string stored, TimeSpan delay, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(delay, MaxDelay);
        return _store.ScheduleAsync(stored, delay, cancellationToken);
    }

    /// <summary>Stores a payload already in its envelope to run at <paramref name="runAt"/>.</summary>
    public ValueTask<string> ScheduleStoredAsync(string stored, DateTimeOffset runAt, CancellationToken cancellationToken) =>
        _store.ScheduleAsync(stored, runAt, cancellationToken);

    public async ValueTask<bool> CancelScheduledAsync(string jobId, CancellationToken cancellationToken = default)
    {
        CheckJobId(jobId);
        try
        {
            return await _jobs.CancelScheduledAsync(jobId).WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is StackExchange.Redis.RedisException or TimeoutException)
        {
            throw Unavailable("the cancel", ex);
        }
    }

    public async ValueTask<JobStatus?> GetJobAsync(string jobId, CancellationToken cancellationToken = default)
    {
        CheckJobId(jobId);
        try
        {
            return await _jobs.GetJobAsync(jobId).WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is StackExchange.Redis.RedisException or TimeoutException)
        {
            throw Unavailable("the status read", ex);
        }
    }

    public async ValueTask<JobCancelResult> CancelAsync(string jobId, CancellationToken cancellationToken = default)
    {
        CheckJobId(jobId);
        try
        {
            return await _jobs.CancelAsync(jobId).WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is StackExchange.Redis.RedisException or TimeoutException)
        {
            throw Unavailable("the cancel", ex);
        }
    }

    public async ValueTask<JobPage> FindJobsAsync(JobQuery query, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(query);
        query.Validate(nameof(query), checkCursor: false);
        if (query.Cursor is not null && !RedisJobBrowser.IsSearchCursor(query.Cursor))
        {
            throw new ArgumentException($"JobQuery.Cursor '{query.Cursor}' is not a cursor a durable job page returned.", nameof(query));
        }

        try
        {
            return (await _jobs.FindJobsAsync(query.States, query.NameContains, query.ErrorContains, query.Cursor, query.Limit, query.ScanLimit, wait: true, cancellationToken).WaitAsync(cancellationToken).ConfigureAwait(false))!;
        }
        catch (Exception ex) when (ex is StackExchange.Redis.RedisException or TimeoutException)
        {
            throw Unavailable("the job search", ex);
        }
    }

    /// <summary>
    /// The W3C <c>traceparent</c> of the activity current at the enqueue, stored with the job so that its span, on
    /// whichever instance runs it, has that activity as its parent; <see langword="null"/> (nothing stored, nothing
    /// allocated) while nobody listens to WorkQueue's activities or none is current.
    /// </summary>
    private static string? TraceParent() =>
        WorkQueueTracing.CaptureParent() is { IdFormat: ActivityIdFormat.W3C, Id: { Length: JobTypeEnvelope.TraceParentLength } id } ? id : null;

    private EnqueueResult ToResult(string id)
    {
        if (id.Length > 0 && id[0] == RedisStreamStore.DeduplicatedPrefix)
        {
            _metrics?.Deduplicated(_metricTag);
            return new EnqueueResult(id[1..], Created: false);
        }

        return new EnqueueResult(id, Created: true);
    }

    private static void CheckJobId(string jobId)
    {
        ArgumentException.ThrowIfNullOrEmpty(jobId);
        if (!StreamIdGrammar.IsJobId(jobId))
        {
            throw new ArgumentException($"'{jobId}' is not a durable job id: one looks like 1732500000000-0 (EnqueueAsync) or s1732500000000-1 (ScheduleAsync), two whole numbers from 0 to 18446744073709551615 without leading zeros.", nameof(jobId));
        }
    }

    private JobRejectedException Unavailable(string what, Exception ex) =>
        new(_store.QueueName, RejectionReason.StoreUnavailable, $"Durable queue '{_store.QueueName}': {what} did not reach Redis ({ex.Message}).", ex);
}
