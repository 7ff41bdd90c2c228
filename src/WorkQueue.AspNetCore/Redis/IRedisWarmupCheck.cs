using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Redis;

/// <summary>
/// A check of the Redis server that the warm-up runs once every endpoint answered <c>PING</c>, before the warm-up
/// callbacks (the durable queues' server checks, <see cref="Durable.DurableServerChecks"/>): a refusal is named by the
/// check that explains it, not by the first callback Redis refuses a command (the group step,
/// <see cref="Durable.DurableGroupsWarmup"/>). One that throws fails the warm-up as a callback would: startup under
/// <see cref="RedisWarmupFailureMode.FailFast"/>, readiness (tried again at each retry) under
/// <see cref="RedisWarmupFailureMode.StartNotReady"/>.
/// </summary>
internal interface IRedisWarmupCheck
{
    /// <summary>Checks the server through <paramref name="multiplexer"/>; throws to fail the warm-up, with a message that says why.</summary>
    Task RunAsync(IConnectionMultiplexer multiplexer, CancellationToken cancellationToken);
}
