using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using WorkQueue.AspNetCore.Redis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// Validates <see cref="DurableQueueOptions.ClaimTimeout"/> against the shared connection's timeouts, where
/// <c>AddRedisWarmup</c> made that connection (its settings are known before it connects): a claim must outlive the next
/// heartbeat, a heartbeat that stalls for a whole Redis timeout, and its retry, or another instance takes jobs still
/// running here while this one waits for Redis.
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
        if (options.ClaimTimeout < needed)
        {
            return ValidateOptionsResult.Fail(
                $"Durable queue '{name}': ClaimTimeout ({options.ClaimTimeout}) must be at least twice HeartbeatInterval ({options.HeartbeatInterval}) " +
                $"plus the Redis connection's longest timeout (SyncTimeout ({configuration.SyncTimeout} ms), AsyncTimeout ({configuration.AsyncTimeout} ms)), " +
                $"{needed} in all: a heartbeat that waits a whole timeout for Redis and is tried again must still refresh the claims of jobs running here " +
                "before another instance may take them. Raise ClaimTimeout, or lower the timeouts (RedisWarmupOptions.SyncTimeout, RedisWarmupOptions.ConfigureRedis).");
        }

        return ValidateOptionsResult.Success;
    }
}
