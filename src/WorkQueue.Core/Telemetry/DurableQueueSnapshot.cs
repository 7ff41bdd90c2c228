namespace WorkQueue;

/// <summary>
/// A durable queue's side of its snapshot: this process's consumer and the jobs it holds, and the cluster-wide figures
/// last read from the store (shared by every instance; <see langword="null"/> until first read). The rest of the
/// <see cref="WorkQueueSnapshot"/> counts this process's own jobs.
/// </summary>
/// <param name="ConsumerName">This process's consumer name in the queue's group (one per process start).</param>
/// <param name="IsConnected">Whether the store's last call succeeded.</param>
/// <param name="LastError">The store's last error, or <see langword="null"/> when its last call succeeded.</param>
/// <param name="HeldHere">Jobs this process has fetched and not yet settled (prefetched or running).</param>
/// <param name="StreamLength">Unfinished jobs in the store: waiting to be fetched, or fetched and not yet settled.</param>
/// <param name="Pending">Jobs fetched by some consumer and not yet settled.</param>
/// <param name="Lag">Jobs no consumer has fetched yet, when the store can tell.</param>
/// <param name="DelayedRetries">Failed jobs waiting in the store for their retry's due time.</param>
/// <param name="DeadLetters">Jobs in the store's dead letters.</param>
/// <param name="Consumers">Every consumer of the queue, with its pending jobs and how long since it last read.</param>
/// <param name="ReadAt">When the cluster-wide figures were read, or <see langword="null"/> before the first read.</param>
public sealed record DurableQueueSnapshot(
    string ConsumerName,
    bool IsConnected,
    string? LastError,
    int HeldHere,
    long? StreamLength,
    long? Pending,
    long? Lag,
    long? DelayedRetries,
    long? DeadLetters,
    IReadOnlyList<DurableConsumer> Consumers,
    DateTimeOffset? ReadAt)
{
    /// <summary>Gets the scheduled jobs waiting in the store for their time (not retries), when read.</summary>
    public long? Scheduled { get; init; }
}

/// <summary>One consumer of a durable queue: one process start of an instance.</summary>
/// <param name="Name">The consumer's name.</param>
/// <param name="Pending">Jobs it has fetched and not yet settled.</param>
/// <param name="Idle">How long since it last read from the queue.</param>
/// <param name="IsThisProcess">Whether it is this process's consumer.</param>
public sealed record DurableConsumer(string Name, long Pending, TimeSpan Idle, bool IsThisProcess);
