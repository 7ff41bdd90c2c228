using Microsoft.Extensions.DependencyInjection;
using WorkQueue.Queueing;

namespace WorkQueue.Core.Tests.TestSupport;

/// <summary>Builds a service provider with WorkQueue registered the way an app does, and starts the queues.</summary>
internal sealed class QueueHarness : IAsyncDisposable
{
    private QueueHarness(ServiceProvider services)
    {
        Services = services;
        Provider = services.GetRequiredService<WorkQueueProvider>();
        Queue = services.GetRequiredService<IWorkQueue>();
    }

    public ServiceProvider Services { get; }

    public WorkQueueProvider Provider { get; }

    public IWorkQueue Queue { get; }

    public static QueueHarness Start(
        Action<WorkQueueOptions>? configure = null,
        Action<IWorkQueueBuilder>? addQueues = null,
        Action<IServiceCollection>? addServices = null,
        bool start = true)
    {
        var services = new ServiceCollection();
        services.AddLogging();
        addServices?.Invoke(services);
        var builder = services.AddWorkQueue(configure);
        addQueues?.Invoke(builder);
        var harness = new QueueHarness(services.BuildServiceProvider(validateScopes: true));
        if (start)
        {
            harness.Provider.StartAll();
        }

        return harness;
    }

    public async ValueTask DisposeAsync()
    {
        await Provider.StopAllAsync(TimeSpan.FromSeconds(10), CancellationToken.None);
        await Services.DisposeAsync();
    }
}
