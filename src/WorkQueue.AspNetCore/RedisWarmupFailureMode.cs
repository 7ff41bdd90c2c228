namespace WorkQueue.AspNetCore;

/// <summary>
/// Specifies what the app does when Redis cannot be warmed up at startup.
/// </summary>
public enum RedisWarmupFailureMode
{
    /// <summary>Startup fails with a message that names the endpoint and the cause; the server never takes traffic.</summary>
    FailFast,

    /// <summary>The app starts not ready (readiness is unhealthy) and keeps retrying in the background.</summary>
    StartNotReady,
}
