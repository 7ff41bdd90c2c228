using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using WorkQueue.AspNetCore.Redis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// Validates <see cref="DurableQueueOptions.ClaimTimeout"/> against the shared connection's timeouts, where
/// <c>AddRedisWarmup</c> made that connection (its settings are known before it connects): a claim must outlive the next
/// heartbeat, a heartbeat that stalls for a whole Redis timeout, and its retry, or another instance takes jobs still
/// running here while this one waits for Redis. With <see cref="DurableQueueOptions.ReplicaAcknowledgements"/>, also
/// <see cref="DurableQueueOptions.ReplicaAcknowledgementTimeout"/>: at most half the connection's shorter timeout, since
/// a <c>WAIT</c> holds the connection in Redis for that long while replicas do not answer.
/// </summary>
internal sealed class DurableQueueTimeoutsValidator : IValidateOptions<DurableQueueOptions>
{
    private readonly IServiceProvider _services;

    public DurableQueueTimeoutsValidator(IServiceProvider services)
    {
        _services = services;
    }

    public ValidateOptionsResult Validate(string? name, DurableQueueOptions options)
    {
        // A connection registered some other way: its timeouts are not known until it exists.
        if (_services.GetService<RedisConnection>() is not { } connection)
        {
            return ValidateOptionsResult.Success;
        }

        var configuration = connection.DescribeConfiguration();
        var timeout = TimeSpan.FromMilliseconds(Math.Max(configuration.SyncTimeout, configuration.AsyncTimeout));
        var needed = (options.HeartbeatInterval * 2) + timeout;
        var failures = new List<string>(2);
        if (options.ClaimTimeout < needed)
        {
            failures.Add(
                $"Durable queue '{name}': ClaimTimeout ({options.ClaimTimeout}) must be at least twice HeartbeatInterval ({options.HeartbeatInterval}) " +
                $"plus the Redis connection's longest timeout (SyncTimeout ({configuration.SyncTimeout} ms), AsyncTimeout ({configuration.AsyncTimeout} ms)), " +
                $"{needed} in all: a heartbeat that waits a whole timeout for Redis and is tried again must still refresh the claims of jobs running here " +
                "before another instance may take them. Raise ClaimTimeout, or lower the timeouts (RedisWarmupOptions.SyncTimeout, RedisWarmupOptions.ConfigureRedis).");
        }

        // While replicas do not answer, a WAIT holds the shared connection in Redis for its whole timeout: the commands
        // sent behind it (heartbeats, other queues', the app's) must still be answered within the client's timeout.
        int shorter = Math.Min(configuration.SyncTimeout, configuration.AsyncTimeout);
        if (options.ReplicaAcknowledgements > 0 && options.ReplicaAcknowledgementTimeout.TotalMilliseconds * 2 > shorter)
        {
            failures.Add(
                $"Durable queue '{name}': ReplicaAcknowledgementTimeout ({options.ReplicaAcknowledgementTimeout}) must be at most half the Redis connection's shorter timeout " +
                $"(SyncTimeout ({configuration.SyncTimeout} ms), AsyncTimeout ({configuration.AsyncTimeout} ms)), as ReplicaAcknowledgements ({options.ReplicaAcknowledgements}) is on: " +
                "while replicas do not answer, each WAIT holds the connection in Redis for that long, and the commands sent behind it must still be answered in time. " +
                "Lower ReplicaAcknowledgementTimeout, or raise the timeouts (RedisWarmupOptions.SyncTimeout, RedisWarmupOptions.ConfigureRedis).");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
