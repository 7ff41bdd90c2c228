namespace WorkQueue.AspNetCore.Durable;

/// <summary>The producer side of a durable queue: writes the payload as JSON on the caller's thread, then hands it to the store.</summary>
internal sealed class DurableProducer<THandler, TPayload> : IDurableQueue<TPayload>
    where THandler : class, IJobHandler<TPayload>
{
    /// <summary>The longest delay: Redis keeps due times as doubles of Unix ms, exact far beyond it.</summary>
    private static readonly TimeSpan MaxDelay = TimeSpan.FromDays(36_525);

    private readonly RedisStreamStore _store;
    private readonly DurableJobType<THandler, TPayload> _jobType;

    public DurableProducer(RedisStreamStore store, DurableJobType<THandler, TPayload> jobType)
    {
        _store = store;
        _jobType = jobType;
    }

    public string Name => _store.QueueName;

    public ValueTask<string> EnqueueAsync(TPayload payload, CancellationToken cancellationToken = default) =>
        _store.EnqueueAsync(_jobType.Write(payload), cancellationToken);

    public ValueTask<string> ScheduleAsync(TPayload payload, TimeSpan delay, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(delay, MaxDelay);
        return _store.ScheduleAsync(_jobType.Write(payload), delay, cancellationToken);
    }

    public ValueTask<string> ScheduleAsync(TPayload payload, DateTimeOffset runAt, CancellationToken cancellationToken = default) =>
        _store.ScheduleAsync(_jobType.Write(payload), runAt, cancellationToken);

    public async ValueTask<bool> CancelScheduledAsync(string jobId, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(jobId);
        try
        {
            return await _store.CancelScheduledAsync(jobId).WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is StackExchange.Redis.RedisException or TimeoutException)
        {
            throw new JobRejectedException(_store.QueueName, RejectionReason.StoreUnavailable, $"Durable queue '{_store.QueueName}': the cancel did not reach Redis ({ex.Message}).", ex);
        }
    }
}
