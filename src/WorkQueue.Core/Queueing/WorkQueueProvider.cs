using System.Diagnostics.CodeAnalysis;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using WorkQueue.Internal;
using WorkQueue.Telemetry;

namespace WorkQueue.Queueing;

/// <summary>Creates and starts every registered queue (validating its options), and stops them together.</summary>
internal sealed class WorkQueueProvider : IWorkQueueProvider, IAsyncDisposable
{
    private readonly Dictionary<string, DefaultWorkQueue> _queues = new(StringComparer.OrdinalIgnoreCase);

    public WorkQueueProvider(
        IOptions<WorkQueueRegistry> registry,
        IOptionsMonitor<WorkQueueOptions> options,
        IServiceProvider services,
        WorkQueueMetrics metrics)
    {
        // Logging is optional: without AddLogging() the queues log nowhere rather than fail.
        var loggerFactory = (ILoggerFactory?)services.GetService(typeof(ILoggerFactory)) ?? NullLoggerFactory.Instance;
        foreach (var name in registry.Value.QueueNames)
        {
            // Get() runs the validators: a bad setting fails here with a message that names it.
            _queues.Add(name, new DefaultWorkQueue(name, options.Get(name), services, metrics, loggerFactory));
        }

        Queues = [.. _queues.Values];

        // Workers start as soon as the queues exist, so plain DI (no host) works too. Under a host, the hosted service
        // is what first resolves this provider, in StartingAsync: before any server takes traffic.
        StartAll();
    }

    public IReadOnlyCollection<IWorkQueue> Queues { get; }

    public IWorkQueue GetQueue(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        return TryGetQueue(name, out var queue)
            ? queue
            : throw new ArgumentException($"No WorkQueue queue is named '{name}'. Registered queues: {string.Join(", ", _queues.Keys)}.", nameof(name));
    }

    public bool TryGetQueue(string name, [NotNullWhen(true)] out IWorkQueue? queue)
    {
        ArgumentNullException.ThrowIfNull(name);
        bool found = _queues.TryGetValue(name, out var q);
        queue = q;
        return found;
    }

    private void StartAll()
    {
        foreach (var queue in _queues.Values)
        {
            queue.Start();
        }
    }

    public async Task<ShutdownReport[]> StopAllAsync(TimeSpan drainTimeout, CancellationToken cancellationToken) =>
        await Task.WhenAll(_queues.Values.Select(q => q.StopAsync(drainTimeout, cancellationToken))).ConfigureAwait(false);

    public async ValueTask DisposeAsync()
    {
        foreach (var queue in _queues.Values)
        {
            await queue.DisposeAsync().ConfigureAwait(false);
        }
    }
}
