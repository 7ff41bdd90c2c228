using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// Ready while the durable queue's last Redis call succeeded, its keys have a primary and its thread goes round: it can
/// fetch, settle and enqueue.
/// </summary>
internal sealed class DurableQueueHealthCheck(DurableQueueRegistry registry, IWorkQueueProvider provider, string queue) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        // Resolving the provider creates the queues (and their stores) if nothing has yet.
        _ = provider.Queues;
        if (!registry.TryGet(queue, out var durable))
        {
            return Task.FromResult(HealthCheckResult.Unhealthy($"Durable queue '{queue}' was not created."));
        }

        var store = durable.Store;
        return Task.FromResult(store.IsConnected
            ? HealthCheckResult.Healthy($"Durable queue '{queue}' reads {store.Keys.Stream} as {store.ConsumerName}.")
            : HealthCheckResult.Unhealthy($"Durable queue '{queue}' is not ready: {store.LastError ?? "not connected to Redis yet"}."));
    }
}
