using Microsoft.Extensions.DependencyInjection;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// The default <see cref="IWorkQueue"/> of a plain <see cref="ServiceProvider"/> (no host), the way a console app or a
/// test would use it: resolving the queue starts its workers; <see cref="Dispose"/> drains and stops it.
/// </summary>
public sealed class WorkQueueHost : IDisposable
{
    private readonly ServiceProvider _services;

    private WorkQueueHost(ServiceProvider services)
    {
        _services = services;
        Queue = services.GetRequiredService<IInMemoryWorkQueue>();
        Control = services.GetRequiredService<IWorkQueueProvider>().Queues.Single(q => q.Name == Queue.Name);
    }

    /// <summary>Gets the queue.</summary>
    public IInMemoryWorkQueue Queue { get; }

    /// <summary>Gets the default queue's control side (snapshots, pause, stop).</summary>
    public IWorkQueueControl Control { get; }

    /// <summary>Creates the service provider and resolves (so starts) the default queue.</summary>
    /// <param name="configure">Configures the default queue.</param>
    /// <returns>The started queue.</returns>
    public static WorkQueueHost Start(Action<WorkQueueOptions> configure) =>
        new(new ServiceCollection().AddWorkQueue(configure).Services.BuildServiceProvider());

    /// <summary>Creates a queue with a fixed number of workers: autoscaling off, <c>MinWorkers = MaxWorkers</c>.</summary>
    /// <param name="workers">The number of workers.</param>
    /// <param name="capacity">The queue's capacity.</param>
    /// <param name="spinBeforeParking">The <see cref="WorkQueueOptions.SpinBeforeParking"/> setting (off by default).</param>
    /// <returns>The started queue.</returns>
    public static WorkQueueHost StartFixed(int workers, int capacity, bool spinBeforeParking = false) => Start(o =>
    {
        o.MinWorkers = workers;
        o.MaxWorkers = workers;
        o.AutoScale.Enabled = false;
        o.Capacity = capacity;
        o.SpinBeforeParking = spinBeforeParking;
    });

    /// <summary>Waits until the queue reports <paramref name="workers"/> live workers.</summary>
    /// <param name="workers">The expected worker count.</param>
    /// <exception cref="TimeoutException">The workers did not start within 10 seconds.</exception>
    public void WaitForWorkers(int workers)
    {
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (Control.GetSnapshot().Workers != workers)
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"WorkQueue has {Control.GetSnapshot().Workers} workers, expected {workers}.");
            }

            Thread.Sleep(1);
        }
    }

    /// <summary>Stops the queue (10 s drain) and disposes the service provider.</summary>
    public void Dispose()
    {
        Control.StopAsync(TimeSpan.FromSeconds(10)).GetAwaiter().GetResult();
        _services.DisposeAsync().AsTask().GetAwaiter().GetResult();
    }
}
