using System.Diagnostics.CodeAnalysis;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using WorkQueue.Diagnostics;
using WorkQueue.Internal;
using WorkQueue.Recurring;
using WorkQueue.Scheduling;
using WorkQueue.Telemetry;

namespace WorkQueue.Queueing;

/// <summary>Creates and starts every registered queue (validating its options), and stops them, together or one at a time.</summary>
internal sealed class WorkQueueProvider : IWorkQueueProvider, IAsyncDisposable
{
    private readonly Dictionary<string, QueueRuntime> _queues = new(StringComparer.OrdinalIgnoreCase);
    private readonly object _stopLock = new();
    private readonly TimeProvider _time;
    private Task<IReadOnlyList<ShutdownReport>>? _stopAll;

    public WorkQueueProvider(
        IOptions<WorkQueueRegistry> registry,
        IOptionsMonitor<WorkQueueOptions> options,
        IServiceProvider services,
        WorkQueueMetrics metrics,
        WorkQueueEnvironment environment,
        IOptions<ThreadPoolCanaryOptions> canaryOptions)
    {
        _time = environment.Time;
        Scheduler = new JobScheduler(_time);

        // Logging is optional: without AddLogging() the queues log nowhere rather than fail.
        var loggerFactory = (ILoggerFactory?)services.GetService(typeof(ILoggerFactory)) ?? NullLoggerFactory.Instance;
        foreach (var name in registry.Value.QueueNames)
        {
            // Get() runs the validators: a bad setting fails here with a message that names it.
            var queueOptions = options.Get(WorkQueueRegistry.OptionsName(name));
            var store = registry.Value.Stores.TryGetValue(name, out var createStore) ? createStore(services, name) : null;
            _queues.Add(name, new QueueRuntime(name, queueOptions, this, services, metrics, environment, loggerFactory, store));
        }

        Queues = [.. _queues.Values.Select(q => q.Control)];

        // Threads start as soon as the queues exist, so plain DI (no host) works too. Under a host, the hosted service
        // is what first resolves this provider, in StartingAsync: before any server takes traffic.
        // Recurring jobs are checked before any thread starts (an unknown queue fails here, naming the setting), and
        // start with the queues they feed.
        if (services.GetService(typeof(RecurringJobRegistry)) is RecurringJobRegistry recurring)
        {
            Recurring = new RecurringJobManager(this, recurring, environment, loggerFactory);
        }

        foreach (var queue in _queues.Values)
        {
            queue.Start();
        }

        Recurring?.Start();

        // One canary per engine, timed by the engine's own timer thread.
        Canary = new ThreadPoolCanary(canaryOptions.Value, _time, metrics, loggerFactory.CreateLogger("WorkQueue.ThreadPool"));
    }

    public IReadOnlyCollection<IWorkQueueControl> Queues { get; }

    /// <summary>Gets the thread-pool starvation alarm.</summary>
    public ThreadPoolCanary Canary { get; }

    /// <summary>Gets the recurring jobs, if any were registered.</summary>
    public RecurringJobManager? Recurring { get; }

    /// <summary>Gets the engine's one timer structure for the scheduled jobs of all its queues.</summary>
    public JobScheduler Scheduler { get; }

    /// <summary>Gets the object that marks code running inside this provider's jobs (see <see cref="JobFlow"/>).</summary>
    public object FlowMarker => this;

    public IWorkQueue GetQueue(string name)
    {
        // The one place a durable queue's producer comes from: its store's.
        var queue = Find(name);
        return queue.Store is { } store ? store.Producer : queue.Producer;
    }

    public IInMemoryWorkQueue GetInMemoryQueue(string name)
    {
        var queue = Find(name);
        return queue.Store is null
            ? queue.Producer
            : throw new InvalidOperationException($"Queue '{queue.Name}' is durable: its jobs are stored, so it takes typed-handler jobs only, through IWorkQueue (GetQueue), not delegates, handler instances or TryEnqueue through IInMemoryWorkQueue.");
    }

    public bool TryGetControl(string name, [NotNullWhen(true)] out IWorkQueueControl? queue)
    {
        ArgumentNullException.ThrowIfNull(name);
        bool found = _queues.TryGetValue(name, out var runtime);
        queue = runtime?.Control;
        return found;
    }

    /// <summary>Gets a queue's runtime, for tests and the packages built on this one.</summary>
    internal QueueRuntime Find(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        return _queues.TryGetValue(name, out var runtime)
            ? runtime
            : throw new ArgumentException($"No WorkQueue queue is named '{name}'. Registered queues: {string.Join(", ", _queues.Keys)}.", nameof(name));
    }

    public Task<IReadOnlyList<ShutdownReport>> StopAsync(TimeSpan drainTimeout, CancellationToken cancellationToken = default)
    {
        CheckDrainTimeout(drainTimeout);
        // No occurrence is offered to a queue that is draining.
        Recurring?.Stop();

        TaskCompletionSource<ShutdownReport[]> start;
        QueueRuntime[] joining;
        Task<IReadOnlyList<ShutdownReport>> all;
        lock (_stopLock)
        {
            if (_stopAll is not null)
            {
                return _stopAll;
            }

            // Queues already stopping on their own keep their stop; the others stop together.
            joining = [.. _queues.Values.Where(q => q.StopTask is null)];
            start = new TaskCompletionSource<ShutdownReport[]>(TaskCreationOptions.RunContinuationsAsynchronously);
            for (int i = 0; i < joining.Length; i++)
            {
                joining[i].StopTask = SelectAsync(start.Task, i);
            }

            all = _stopAll = CollectAsync([.. _queues.Values.Select(q => q.StopTask!)]);
        }

        // Started outside the lock: with a zero timeout the whole stop (cancelling jobs' tokens) can run synchronously.
        _ = RunGroupAsync(start, joining, drainTimeout, cancellationToken);
        return all;
    }

    public Task<ShutdownReport> StopQueueAsync(QueueRuntime queue, TimeSpan drainTimeout, CancellationToken cancellationToken)
    {
        CheckDrainTimeout(drainTimeout);
        TaskCompletionSource<ShutdownReport[]> start;
        lock (_stopLock)
        {
            if (queue.StopTask is { } existing)
            {
                return existing;
            }

            start = new TaskCompletionSource<ShutdownReport[]>(TaskCreationOptions.RunContinuationsAsynchronously);
            queue.StopTask = SelectAsync(start.Task, 0);
        }

        _ = RunGroupAsync(start, [queue], drainTimeout, cancellationToken);
        return queue.StopTask;
    }

    public async ValueTask DisposeAsync()
    {
        await StopAsync(TimeSpan.Zero).ConfigureAwait(false);
        Scheduler.Dispose();
        Canary.Dispose();
    }

    private async Task RunGroupAsync(TaskCompletionSource<ShutdownReport[]> result, QueueRuntime[] queues, TimeSpan drainTimeout, CancellationToken cancellationToken)
    {
        try
        {
            result.TrySetResult(queues.Length == 0 ? [] : await new ShutdownGroup(queues, _time).RunAsync(drainTimeout, cancellationToken).ConfigureAwait(false));
        }
        catch (Exception ex)
        {
            result.TrySetException(ex);
        }
    }

    private static async Task<ShutdownReport> SelectAsync(Task<ShutdownReport[]> group, int index) =>
        (await group.ConfigureAwait(false))[index];

    private static async Task<IReadOnlyList<ShutdownReport>> CollectAsync(Task<ShutdownReport>[] stops) =>
        await Task.WhenAll(stops).ConfigureAwait(false);

    private static void CheckDrainTimeout(TimeSpan drainTimeout)
    {
        if (drainTimeout != Timeout.InfiniteTimeSpan)
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(drainTimeout, TimeSpan.Zero);

            // The longest finite wait Task.WaitAsync accepts; checked before any queue stops accepting.
            ArgumentOutOfRangeException.ThrowIfGreaterThan(drainTimeout, TimeSpan.FromMilliseconds(uint.MaxValue - 1));
        }
    }
}
