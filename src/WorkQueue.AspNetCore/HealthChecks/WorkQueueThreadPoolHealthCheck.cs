using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace WorkQueue.AspNetCore.HealthChecks;

/// <summary>Reports the thread-pool starvation alarm's latest wait against two thresholds. Never awaits: it answers while the pool is starved.</summary>
internal sealed class WorkQueueThreadPoolHealthCheck(IThreadPoolCanary canary, TimeSpan degradedAfter, TimeSpan unhealthyAfter) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        var health = canary.GetHealth();
        var data = new Dictionary<string, object>
        {
            ["lagMs"] = health.Lag.TotalMilliseconds,
            ["maxLagMs"] = health.MaxLag.TotalMilliseconds,
            ["threads"] = health.ThreadCount,
            ["pendingWorkItems"] = health.PendingWorkItems,
            ["enabled"] = health.IsEnabled,
        };
        string summary = $"Work items wait {health.Lag.TotalMilliseconds:F0} ms for a CLR thread-pool thread ({health.ThreadCount} threads, {health.PendingWorkItems} queued).";
        var result = health.Lag >= unhealthyAfter
            ? new HealthCheckResult(context.Registration.FailureStatus, summary + " The pool is starved: blocking code on it holds its threads.", data: data)
            : health.Lag >= degradedAfter
                ? HealthCheckResult.Degraded(summary + " The pool is starving.", data: data)
                : HealthCheckResult.Healthy(summary, data);
        return Task.FromResult(result);
    }
}
