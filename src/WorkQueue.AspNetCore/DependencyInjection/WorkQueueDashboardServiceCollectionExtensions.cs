using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using WorkQueue.AspNetCore.Dashboard;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>
/// Registers what the WorkQueue dashboard needs on the server.
/// </summary>
public static class WorkQueueDashboardServiceCollectionExtensions
{
    /// <summary>
    /// Adds a hosted sampler that takes a snapshot of every queue once a second and keeps the last five minutes, served
    /// by the admin endpoint <c>GET {prefix}/history</c>, so a dashboard opened now shows recent history at once.
    /// Calling it again adds nothing twice. Needs <c>AddWorkQueue</c>.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <returns>The service collection.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is <see langword="null"/>.</exception>
    public static IServiceCollection AddWorkQueueDashboard(this IServiceCollection services)
    {
        ArgumentNullException.ThrowIfNull(services);

        services.TryAddSingleton(TimeProvider.System);
        services.TryAddSingleton<DashboardHistory>();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, DashboardSampler>());
        return services;
    }
}
