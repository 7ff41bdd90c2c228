namespace WorkQueue.AspNetCore;

/// <summary>
/// Specifies what a durable queue does at startup when the Redis server it uses is set up in a way that can lose its
/// jobs (an evicting <c>maxmemory-policy</c>, <c>appendonly no</c>), is older than its scripts need, or refuses the
/// connection's user a command the queue sends (see <see cref="DurableQueueOptions.ServerChecks"/>).
/// </summary>
public enum RedisServerCheckMode
{
    /// <summary>Each risk found is logged as a warning (a refused command as an error), and the app starts.</summary>
    Warn,

    /// <summary>
    /// A risk or a refused command fails the Redis warm-up with a message naming each: startup fails under
    /// <see cref="RedisWarmupFailureMode.FailFast"/>, readiness stays unhealthy (and the checks run again with each retry)
    /// under <see cref="RedisWarmupFailureMode.StartNotReady"/>.
    /// </summary>
    Fail,

    /// <summary>Nothing is checked.</summary>
    Off,
}
