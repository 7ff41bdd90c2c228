using Microsoft.Extensions.DependencyInjection;
using WorkQueue.Queueing;

namespace WorkQueue.Core.Tests.TestSupport;

/// <summary>Builds a service provider with WorkQueue registered the way an app does; resolving it starts the queues.</summary>
internal sealed class QueueHarness : IAsyncDisposable
{
    private QueueHarness(ServiceProvider services)
    {
        Services = services;
        Provider = services.GetRequiredService<WorkQueueProvider>();
        Queue = services.GetRequiredService<IInMemoryWorkQueue>();
        Control = Provider.Find(WorkQueueOptions.DefaultQueueName).Control;
    }

    public ServiceProvider Services { get; }

    public WorkQueueProvider Provider { get; }

    public IInMemoryWorkQueue Queue { get; }

    public IWorkQueueControl Control { get; }

    /// <summary>Gets the runtime of the default queue, for tests that look inside (its pool, its ledger).</summary>
    public QueueRuntime Runtime => Provider.Find(WorkQueueOptions.DefaultQueueName);

    public static QueueHarness Start(
        Action<WorkQueueOptions>? configure = null,
        Action<IWorkQueueBuilder>? addQueues = null,
        Action<IServiceCollection>? addServices = null)
    {
        var services = new ServiceCollection();
        services.AddLogging();
        addServices?.Invoke(services);
        var builder = services.AddWorkQueue(configure);
        addQueues?.Invoke(builder);
        return new QueueHarness(services.BuildServiceProvider(validateScopes: true));
    }

    public async ValueTask DisposeAsync()
    {
        await Provider.StopAsync(TimeSpan.FromSeconds(10), CancellationToken.None);
        await Services.DisposeAsync();
    }
}
