using System.Diagnostics.CodeAnalysis;
using WorkQueue.Telemetry;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>The producer side of a durable queue: writes the payload as JSON on the caller's thread, then hands it to the store.</summary>
internal sealed class DurableProducer<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload> : IDurableQueue<TPayload>
    where THandler : class, IJobHandler<TPayload>
{
    /// <summary>The longest delay: Redis keeps due times as doubles of Unix ms, exact far beyond it.</summary>
    private static readonly TimeSpan MaxDelay = TimeSpan.FromDays(36_525);

    private readonly RedisStreamStore _store;
    private readonly DurableJobType<THandler, TPayload> _jobType;
    private readonly WorkQueueMetrics? _metrics;
    private readonly KeyValuePair<string, object?> _metricTag;

    public DurableProducer(RedisStreamStore store, DurableJobType<THandler, TPayload> jobType, WorkQueueMetrics? metrics)
    {
        _store = store;
        _jobType = jobType;
        _metrics = metrics;
        _metricTag = new KeyValuePair<string, object?>(WorkQueueMetrics.QueueTag, store.QueueName);
    }

    public string Name => _store.QueueName;

    public ValueTask<string> EnqueueAsync(TPayload payload, CancellationToken cancellationToken = default) =>
        _store.EnqueueAsync(_jobType.Write(payload), cancellationToken);

    public ValueTask<EnqueueResult> EnqueueAsync(TPayload payload, JobOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate(nameof(options));
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

        var enqueue = _store.EnqueueAsync(_jobType.Write(payload), spec, options.IdempotencyKey, cancellationToken);
        return enqueue.IsCompletedSuccessfully ? ValueTask.FromResult(ToResult(enqueue.Result)) : AwaitResultAsync(enqueue);

        async ValueTask<EnqueueResult> AwaitResultAsync(ValueTask<string> pending) => ToResult(await pending.ConfigureAwait(false));
    }

    private EnqueueResult ToResult(string id)
    {
        if (id.Length > 0 && id[0] == RedisStreamStore.DeduplicatedPrefix)
        {
            _metrics?.Deduplicated(_metricTag);
            return new EnqueueResult(id[1..], Created: false);
        }

        return new EnqueueResult(id, Created: true);
    }

    public ValueTask<string> ScheduleAsync(TPayload payload, TimeSpan delay, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(delay, MaxDelay);
        return _store.ScheduleAsync(_jobType.Write(payload), delay, cancellationToken);
    }

    public ValueTask<string> ScheduleAsync(TPayload payload, DateTimeOffset runAt, CancellationToken cancellationToken = default) =>
        _store.ScheduleAsync(_jobType.Write(payload), runAt, cancellationToken);

    public async ValueTask<bool> CancelScheduledAsync(string jobId, CancellationToken cancellationToken = default)
    {
        CheckJobId(jobId);
        try
        {
            return await _store.CancelScheduledAsync(jobId).WaitAsync(cancellationToken).ConfigureAwait(false);
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
            return await _store.GetJobAsync(jobId).WaitAsync(cancellationToken).ConfigureAwait(false);
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
            return await _store.CancelAsync(jobId).WaitAsync(cancellationToken).ConfigureAwait(false);
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
        if (query.Cursor is not null && !RedisStreamStore.IsSearchCursor(query.Cursor))
        {
            throw new ArgumentException($"JobQuery.Cursor '{query.Cursor}' is not a cursor a durable job page returned.", nameof(query));
        }

        if (query.NameContains is { } name && !_store.JobType.HandlerName.Contains(name, StringComparison.OrdinalIgnoreCase))
        {
            return new JobPage([], null, 0);
        }

        try
        {
            return (await _store.FindJobsAsync(query.States, query.ErrorContains, query.Cursor, query.Limit, query.ScanLimit, wait: true, cancellationToken).WaitAsync(cancellationToken).ConfigureAwait(false))!;
        }
        catch (Exception ex) when (ex is StackExchange.Redis.RedisException or TimeoutException)
        {
            throw Unavailable("the job search", ex);
        }
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
