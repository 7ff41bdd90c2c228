namespace WorkQueue.AspNetCore.Durable;

/// <summary>The producer side of a durable queue: writes the payload as JSON on the caller's thread, then hands it to the store.</summary>
internal sealed class DurableProducer<THandler, TPayload> : IDurableQueue<TPayload>
    where THandler : class, IJobHandler<TPayload>
{
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
}
