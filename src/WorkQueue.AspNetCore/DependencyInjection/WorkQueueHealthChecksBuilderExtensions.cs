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
}
