using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using StackExchange.Redis;
using WorkQueue.AspNetCore;
using WorkQueue.AspNetCore.Redis;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>
/// Registers a shared, pre-warmed StackExchange.Redis connection.
/// </summary>
public static class RedisWarmupServiceCollectionExtensions
{
    /// <summary>
    /// Registers one shared <see cref="IConnectionMultiplexer"/> and warms it up at startup, before the server accepts
    /// requests: connect, <c>PING</c> every endpoint, run <see cref="RedisWarmupOptions.WarmupCallbacks"/>, and log how
    /// long it took. Adds a readiness health check (tag <see cref="WorkQueueHealthCheckTags.Ready"/>) that is unhealthy
    /// until the warm-up completes. Calling it again only adds more configuration.
    /// </summary>
    /// <remarks>
    /// By default (<see cref="RedisWarmupOptions.DedicatedIoThreads"/>) it turns on StackExchange.Redis's process-wide
    /// <c>DedicatedThreads</c> feature flag before connecting, so that each connection has its own reader and writer
    /// threads (two threads per connection) and Redis replies still arrive when the CLR thread pool is starved; the
    /// warm-up then checks that the connections it made really have them, fails (in either failure mode) with a message
    /// saying so when they do not, and logs the mode.
    /// </remarks>
    /// <param name="services">The service collection.</param>
    /// <param name="configure">Configures the connection and the warm-up.</param>
    /// <returns>The service collection.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is <see langword="null"/>.</exception>
    public static IServiceCollection AddRedisWarmup(this IServiceCollection services, Action<RedisWarmupOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);

        var options = services.AddOptions<RedisWarmupOptions>().ValidateOnStart();
        if (configure is not null)
        {
            options.Configure(configure);
        }

        if (services.Any(d => d.ServiceType == typeof(RedisConnection)))
        {
            return services;
        }

        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<RedisWarmupOptions>, RedisWarmupOptionsValidator>());
        services.TryAddSingleton<RedisConnection>();
        services.TryAddSingleton<IConnectionMultiplexer>(sp => sp.GetRequiredService<RedisConnection>().Multiplexer);
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, RedisWarmupService>());
        services.AddHealthChecks().AddCheck<RedisWarmupHealthCheck>("redis-warmup", tags: [WorkQueueHealthCheckTags.Ready]);
        return services;
    }
}
