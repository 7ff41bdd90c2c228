namespace WorkQueue.Dashboard.Tests.TestSupport;

/// <summary>What a <see cref="DashboardHost"/> needs for its durable queue: the redis-server, a key prefix, the shared job log.</summary>
/// <param name="Redis">The redis-server the queue is kept on.</param>
/// <param name="KeyPrefix">The queue's key prefix: hosts given the same one are instances of one service.</param>
/// <param name="Jobs">What the handler does, and what it did, shared by every instance.</param>
internal sealed record DurableSetup(RedisServer Redis, string KeyPrefix, PaymentJobs Jobs)
{
    /// <summary>Gets the queue's threads per instance (min and max).</summary>
    public int Workers { get; init; } = 4;

    /// <summary>Gets the most jobs running at once per instance (jobs held at an await hold no thread).</summary>
    public int? MaxConcurrency { get; init; } = 16;

    /// <summary>Gets the most unfinished jobs the queue holds in Redis.</summary>
    public int Capacity { get; init; } = 1000;

    /// <summary>Gets how many attempts a job gets (retries wait in Redis, from 2 seconds).</summary>
    public int MaxAttempts { get; init; } = 1;

    /// <summary>Gets how many fetched jobs may wait in an instance to start.</summary>
    public int Prefetch { get; init; } = 64;

    /// <summary>Gets a new setup with its own key prefix, so tests sharing a redis-server never see each other's keys.</summary>
    public static DurableSetup New(RedisServer redis) => new(redis, "dash" + Guid.NewGuid().ToString("N")[..8], new PaymentJobs());
}
