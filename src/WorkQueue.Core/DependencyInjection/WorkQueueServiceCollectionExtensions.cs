using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using WorkQueue;
using WorkQueue.DependencyInjection;
using WorkQueue.Hosting;
using WorkQueue.Internal;
using WorkQueue.Queueing;
using WorkQueue.Telemetry;
using WorkQueue.Validation;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>
/// Registers WorkQueue in an <see cref="IServiceCollection"/>.
/// </summary>
public static class WorkQueueServiceCollectionExtensions
{
    /// <summary>
    /// Adds WorkQueue with its default queue (<see cref="WorkQueueOptions.DefaultQueueName"/>), resolvable as
    /// <see cref="IWorkQueue"/> and <see cref="IInMemoryWorkQueue"/>. The queues' threads start when the queues are first
    /// resolved; in a .NET Generic Host (ASP.NET Core included) that happens before the server takes traffic, and the
    /// queues drain together when the host stops (without a host, call
    /// <see cref="IWorkQueueProvider.StopAsync(TimeSpan, CancellationToken)"/>). Every queue is also a keyed
    /// <see cref="IWorkQueue"/> and <see cref="IInMemoryWorkQueue"/> under its name, matched case-insensitively (the
    /// latter refused for a durable queue, see <see cref="IWorkQueueProvider.GetInMemoryQueue(string)"/>). Calling it
    /// again adds nothing twice.
    /// </summary>
    /// <remarks>
    /// When the container has an <c>IConfiguration</c> (any host does), each section under <c>WorkQueue:Queues</c>
    /// declares a queue by its key (<c>WorkQueue:Queues:default:MaxWorkers=8</c>), and configured values override the
    /// ones set in code. Queues declared only in configuration are reached through <see cref="IWorkQueueProvider"/>.
    /// </remarks>
    /// <param name="services">The service collection.</param>
    /// <param name="configureDefaultQueue">Configures the default queue's options.</param>
    /// <returns>A builder for adding named queues.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is <see langword="null"/>.</exception>
    public static IWorkQueueBuilder AddWorkQueue(this IServiceCollection services, Action<WorkQueueOptions>? configureDefaultQueue = null)
    {
        ArgumentNullException.ThrowIfNull(services);

        services.AddOptions();
        services.AddMetrics();
        services.TryAddSingleton<WorkQueueMetrics>();
        services.TryAddSingleton<WorkQueueProvider>();
        services.TryAddSingleton<IWorkQueueProvider>(sp => sp.GetRequiredService<WorkQueueProvider>());
        services.TryAddSingleton(WorkQueueEnvironment.Default);
        services.TryAddSingleton<IWorkQueue>(sp => sp.GetRequiredService<IWorkQueueProvider>().GetQueue(WorkQueueOptions.DefaultQueueName));

        // Any string key: keyed services match keys exactly, queue names ignore case.
        services.TryAddKeyedSingleton<IWorkQueue>(KeyedService.AnyKey, static (sp, key) => key is string name
            ? sp.GetRequiredService<IWorkQueueProvider>().GetQueue(name)
            : throw new InvalidOperationException($"A keyed IWorkQueue is resolved by the queue's name (a string), not by '{key}'."));
        services.TryAddSingleton<IInMemoryWorkQueue>(sp => sp.GetRequiredService<IWorkQueueProvider>().GetInMemoryQueue(WorkQueueOptions.DefaultQueueName));
        services.TryAddKeyedSingleton<IInMemoryWorkQueue>(KeyedService.AnyKey, static (sp, key) => key is string name
            ? sp.GetRequiredService<IWorkQueueProvider>().GetInMemoryQueue(name)
            : throw new InvalidOperationException($"A keyed IInMemoryWorkQueue is resolved by the queue's name (a string), not by '{key}'."));
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, WorkQueueHostedService>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<WorkQueueOptions>, WorkQueueOptionsValidator>());
        services.AddOptions<ThreadPoolCanaryOptions>().ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<ThreadPoolCanaryOptions>, ThreadPoolCanaryOptionsValidator>());
        services.TryAddSingleton<IThreadPoolCanary>(static sp => sp.GetRequiredService<WorkQueueProvider>().Canary);
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<WorkQueueOptions>, WorkQueueOptionsRulesValidator>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<WorkQueueOptions>, WorkQueueStoreConfigurationValidator>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IPostConfigureOptions<WorkQueueOptions>, WorkQueueConfiguration>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IPostConfigureOptions<WorkQueueRegistry>, WorkQueueConfiguration>());

        return new WorkQueueBuilder(services).AddQueue(WorkQueueOptions.DefaultQueueName, configureDefaultQueue);
    }
}
