namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// A durable queue's cluster-wide figures, read from Redis (shared by every instance), next to which the queue's
/// WorkQueueSnapshot shows this process's own counters.
/// </summary>
/// <param name="ConsumerName">This process's consumer name in the queue's group.</param>
/// <param name="StreamLength">Unfinished jobs in the stream: waiting to be fetched plus fetched and not yet settled.</param>
/// <param name="Pending">Jobs fetched by some consumer and not yet settled.</param>
/// <param name="Lag">Jobs in the stream no consumer has fetched yet, when Redis can tell.</param>
/// <param name="DelayedRetries">Failed jobs waiting for their retry's due time.</param>
/// <param name="Scheduled">Scheduled jobs waiting for their time (not retries).</param>
/// <param name="DeadLetters">Jobs in the dead-letter stream.</param>
/// <param name="Consumers">Every consumer in the group, with its pending jobs and how long since it last read.</param>
/// <param name="ReadAt">When these figures were read.</param>
internal sealed record DurableQueueStats(
    string ConsumerName,
    long StreamLength,
    long Pending,
    long? Lag,
    long DelayedRetries,
    long DeadLetters,
    long Scheduled,
    IReadOnlyList<DurableConsumer> Consumers,
    DateTimeOffset ReadAt);
