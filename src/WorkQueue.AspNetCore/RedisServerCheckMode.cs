namespace WorkQueue.AspNetCore;

/// <summary>
/// Specifies what a durable queue does at startup when the Redis server it uses is set up in a way that can lose its
/// jobs (an evicting <c>maxmemory-policy</c>, <c>appendonly no</c>) or is older than its scripts need (see
/// <see cref="DurableQueueOptions.ServerChecks"/>).
/// </summary>
public enum RedisServerCheckMode
{
    /// <summary>Each risk found is logged as a warning, and the app starts.</summary>
    Warn,

    /// <summary>
    /// A risk fails the Redis warm-up with a message naming each: startup fails under
    /// <see cref="RedisWarmupFailureMode.FailFast"/>, readiness stays unhealthy (and the checks run again with each retry)
    /// under <see cref="RedisWarmupFailureMode.StartNotReady"/>.
    /// </summary>
    Fail,

    /// <summary>Nothing is checked.</summary>
    Off,
}
