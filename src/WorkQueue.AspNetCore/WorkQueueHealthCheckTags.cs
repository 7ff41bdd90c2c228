namespace WorkQueue.AspNetCore;

/// <summary>
/// Tags the WorkQueue health checks are registered with, for filtering in <c>MapHealthChecks</c>.
/// </summary>
public static class WorkQueueHealthCheckTags
{
    /// <summary>The readiness tag: Redis warm-up and queue saturation checks carry it.</summary>
    public const string Ready = "ready";
}
