using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace WorkQueue.AspNetCore.HealthChecks;

/// <summary>Readiness: unhealthy while any queue is filled beyond a share of its capacity.</summary>
internal sealed class WorkQueueSaturationHealthCheck : IHealthCheck
{
    private readonly IWorkQueueProvider _queues;
    private readonly double _threshold;

    public WorkQueueSaturationHealthCheck(IWorkQueueProvider queues, double threshold)
    {
        _queues = queues;
        _threshold = threshold;
    }

    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        var data = new Dictionary<string, object>();
        var saturated = new List<string>();
        foreach (var queue in _queues.Queues)
        {
            var snapshot = queue.GetSnapshot();
            double fill = (double)snapshot.Depth / snapshot.Capacity;
            data[queue.Name] = $"{snapshot.Depth}/{snapshot.Capacity}";
            if (fill >= _threshold)
            {
                saturated.Add($"'{queue.Name}' ({snapshot.Depth}/{snapshot.Capacity})");
            }
        }

        return Task.FromResult(saturated.Count == 0
            ? HealthCheckResult.Healthy($"No queue is {_threshold:P0} full.", data)
            : new HealthCheckResult(context.Registration.FailureStatus, $"Saturated: {string.Join(", ", saturated)} at or above {_threshold:P0} of capacity.", data: data));
    }
}
