using Microsoft.Extensions.Diagnostics.HealthChecks;
using WorkQueue;
using WorkQueue.AspNetCore;
using WorkQueue.AspNetCore.HealthChecks;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>
/// Adds WorkQueue health checks to an <see cref="IHealthChecksBuilder"/>.
/// </summary>
public static class WorkQueueHealthChecksBuilderExtensions
{
    /// <summary>
    /// Adds a readiness check that is unhealthy while any queue holds at least <paramref name="threshold"/> of its
    /// capacity, so a load balancer stops sending work to an instance that cannot absorb it.
    /// </summary>
    /// <param name="builder">The health checks builder.</param>
    /// <param name="threshold">The share of capacity, above 0 and at most 1, at which a queue counts as saturated.</param>
    /// <param name="name">The check's name.</param>
    /// <param name="tags">The check's tags; by default <see cref="WorkQueueHealthCheckTags.Ready"/>.</param>
    /// <returns>The builder.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="threshold"/> is not in (0, 1].</exception>
    public static IHealthChecksBuilder AddWorkQueueSaturation(
        this IHealthChecksBuilder builder,
        double threshold = 0.9,
        string name = "workqueue-saturation",
        IEnumerable<string>? tags = null)
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(threshold);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(threshold, 1.0);

        return builder.Add(new HealthCheckRegistration(
            name,
            sp => new WorkQueueSaturationHealthCheck(sp.GetRequiredService<IWorkQueueProvider>(), threshold),
            failureStatus: null,
            tags: tags ?? [WorkQueueHealthCheckTags.Ready]));
    }

    /// <summary>
    /// Adds a readiness check on the thread-pool starvation alarm (<see cref="IThreadPoolCanary"/>): degraded while work
    /// items wait at least <paramref name="degradedAfter"/> for a CLR thread-pool thread, unhealthy from
    /// <paramref name="unhealthyAfter"/>, with the wait, the pool's threads and its queued work items in the data.
    /// </summary>
    /// <param name="builder">The health checks builder.</param>
    /// <param name="degradedAfter">The wait from which the check is degraded; by default 500 ms.</param>
    /// <param name="unhealthyAfter">The wait from which it is unhealthy; by default 5 s.</param>
    /// <param name="name">The check's name.</param>
    /// <param name="tags">The check's tags; by default <see cref="WorkQueueHealthCheckTags.Ready"/>.</param>
    /// <returns>The builder.</returns>
    /// <exception cref="ArgumentOutOfRangeException">A wait is not positive, or <paramref name="unhealthyAfter"/> is below <paramref name="degradedAfter"/>.</exception>
    public static IHealthChecksBuilder AddWorkQueueThreadPool(
        this IHealthChecksBuilder builder,
        TimeSpan? degradedAfter = null,
        TimeSpan? unhealthyAfter = null,
        string name = "workqueue-threadpool",
        IEnumerable<string>? tags = null)
    {
        ArgumentNullException.ThrowIfNull(builder);
        var degraded = degradedAfter ?? TimeSpan.FromMilliseconds(500);
        var unhealthy = unhealthyAfter ?? TimeSpan.FromSeconds(5);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(degraded, TimeSpan.Zero, nameof(degradedAfter));
        ArgumentOutOfRangeException.ThrowIfLessThan(unhealthy, degraded, nameof(unhealthyAfter));

        return builder.Add(new HealthCheckRegistration(
            name,
            sp => new WorkQueueThreadPoolHealthCheck(sp.GetRequiredService<IThreadPoolCanary>(), degraded, unhealthy),
            failureStatus: null,
            tags: tags ?? [WorkQueueHealthCheckTags.Ready]));
    }
}
