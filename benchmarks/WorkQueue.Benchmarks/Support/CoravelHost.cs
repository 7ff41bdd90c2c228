using Coravel;
using Coravel.Queuing.Interfaces;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// Coravel's queue set up the way its docs set it up: <c>services.AddQueue()</c>, the consummation interval from
/// configuration (<c>Coravel:Queue:ConsummationDelay</c>), and the queue's hosted service started as a host starts it.
/// Jobs go in through <see cref="IQueue"/>.
/// </summary>
/// <remarks>
/// Coravel's hosted service consumes the queue on a timer: every <see cref="ConsummationDelaySeconds"/> it takes every
/// queued task and runs them on one thread-pool thread, a synchronous task after the other (async tasks interleave at
/// their awaits). The delay is whole seconds, 30 by default; 1 (the docs' example) is the smallest that works: it is
/// the timer's period, and a period of 0 makes a timer fire once, so the queue would never be consumed again. There is
/// no worker count.
/// </remarks>
public sealed class CoravelHost : IDisposable
{
    /// <summary>The consummation delay the benchmarks configure: 1 second, the shortest Coravel supports.</summary>
    public const int ConsummationDelaySeconds = 1;

    private readonly ServiceProvider _services;
    private readonly IHostedService[] _hostedServices;
    private bool _started;

    private CoravelHost()
    {
        var configuration = new ConfigurationBuilder()
            .AddInMemoryCollection(new Dictionary<string, string?>
            {
                ["Coravel:Queue:ConsummationDelay"] = ConsummationDelaySeconds.ToString(System.Globalization.CultureInfo.InvariantCulture),
            })
            .Build();
        var services = new ServiceCollection();
        services.AddSingleton<IConfiguration>(configuration);
        services.AddLogging();
        services.AddQueue();
        _services = services.BuildServiceProvider();
        _hostedServices = [.. _services.GetServices<IHostedService>()];
        Queue = _services.GetRequiredService<IQueue>();
    }

    /// <summary>Gets the queue.</summary>
    public IQueue Queue { get; }

    /// <summary>Creates the queue and starts its hosted service (its consummation timer).</summary>
    /// <returns>The started host.</returns>
    public static CoravelHost Start()
    {
        var host = new CoravelHost();
        host.StartConsuming();
        return host;
    }

    /// <summary>Creates the queue without starting its hosted service: tasks are queued and nothing consumes them.</summary>
    /// <returns>The host, not consuming.</returns>
    public static CoravelHost StartNotConsuming() => new();

    /// <summary>
    /// Runs every queued task now, on the calling thread, with the method Coravel's hosted service calls on each tick
    /// (<c>Queue.ConsumeQueueAsync</c>, public on Coravel's <c>Queue</c> class).
    /// </summary>
    public void ConsumeNow() => ((Coravel.Queuing.Queue)Queue).ConsumeQueueAsync().GetAwaiter().GetResult();

    /// <summary>Stops the hosted service (Coravel runs what is still queued first) and disposes the services.</summary>
    public void Dispose()
    {
        if (_started)
        {
            foreach (var service in _hostedServices)
            {
                service.StopAsync(CancellationToken.None).GetAwaiter().GetResult();
            }
        }

        _services.Dispose();
    }

    private void StartConsuming()
    {
        foreach (var service in _hostedServices)
        {
            service.StartAsync(CancellationToken.None).GetAwaiter().GetResult();
        }

        _started = true;
    }
}
