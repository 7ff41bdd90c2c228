using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using WorkQueue.Accounting;
using WorkQueue.Execution;
using WorkQueue.Internal;
using WorkQueue.Scaling;
using WorkQueue.Telemetry;
using WorkQueue.Workers;

namespace WorkQueue.Queueing;

/// <summary>
/// Builds one queue from its parts and holds them together. A job's path reads one way: <see cref="QueueProducer"/>
/// (admit, count, write) -> the channel -> <see cref="WorkerPool"/> (where and when it runs) -> <see cref="JobRunner"/>
/// (what it does, how it ends) -> <see cref="JobLedger"/> (every accepted job ends exactly once).
/// </summary>
internal sealed partial class QueueRuntime : IQueueGaugeSource
{
    private readonly Channel<WorkItem> _channel;
    private readonly WorkQueueMetrics _metrics;
    private readonly ILogger _logger;
    private readonly Admission _admission;
    private readonly JobRunner _runner;
    private readonly AutoScaler _scaler;
    private readonly LatencyWindow _queueWait = new();
    private readonly LatencyWindow _runTime = new();
    private readonly TimeProvider _time;

    public QueueRuntime(
        string name,
        WorkQueueOptions options,
        WorkQueueProvider owner,
        IServiceProvider services,
        WorkQueueMetrics metrics,
        WorkQueueEnvironment environment,
        ILoggerFactory loggerFactory)
    {
        Name = name;
        Options = options;
        Owner = owner;
        _metrics = metrics;
        _time = environment.Time;
        _logger = loggerFactory.CreateLogger("WorkQueue");
        MetricTag = new KeyValuePair<string, object?>(WorkQueueMetrics.QueueTag, name);
        DeadLetters = new DeadLetterStore(options.DeadLetterCapacity);
        _admission = new Admission(owner.FlowMarker);

        var channelOptions = new BoundedChannelOptions(options.Capacity)
        {
            FullMode = options.FullMode == QueueFullMode.DropOldest ? BoundedChannelFullMode.DropOldest : BoundedChannelFullMode.Wait,

            // Many threads read (one waits at a time) and many request threads write. Synchronous continuations stay
            // off: a job must never run inline on the thread that enqueued it.
            SingleReader = false,
            SingleWriter = false,
            AllowSynchronousContinuations = false,
        };
        _runner = new JobRunner(name, options, services, Ledger, DeadLetters, metrics, _queueWait, _runTime, environment, () => Pool!.IsAbandoning, _logger);
        _channel = options.FullMode == QueueFullMode.DropOldest
            ? Channel.CreateBounded<WorkItem>(channelOptions, _runner.ReportDropped)
            : Channel.CreateBounded<WorkItem>(channelOptions);

        var settings = new WorkerPoolSettings(
            name,
            options.MinWorkers,
            options.MaxWorkers,
            options.MaxConcurrency,
            options.IdleTimeout,
            options.JobTimeout,
            options.StuckJobThreshold,
            options.SpinBeforeParking);
        Pool = new WorkerPool(settings, _channel.Reader, _runner, _time, metrics, () => Ledger.Offers, owner.FlowMarker, _logger);
        _runner.Requeue = item => Pool.EnqueueRetry(item);
        _scaler = new AutoScaler(options.AutoScale, Pool, name, OldestWait, () => Pool.IsIdle, _time, _logger);
        _runner.Scaler = _scaler;
        Producer = new QueueProducer(name, _channel.Writer, Ledger, _admission, options, metrics, _time);
        Control = new QueueControl(this);
        _metrics.Register(this);
    }

    public string Name { get; }

    public WorkQueueOptions Options { get; }

    public WorkQueueProvider Owner { get; }

    public JobLedger Ledger { get; } = new();

    public DeadLetterStore DeadLetters { get; }

    public WorkerPool Pool { get; }

    public QueueProducer Producer { get; }

    public QueueControl Control { get; }

    public KeyValuePair<string, object?> MetricTag { get; }

    public int Depth => _channel.Reader.Count;

    public int Capacity => Options.Capacity;

    public int CurrentWorkers => Pool.LiveCount;

    public int BusyWorkers => Pool.BusyCount;

    public int RunningJobs => Pool.RunningJobs;

    public int WaitingContinuations => Pool.WaitingContinuations;

    /// <summary>Gets the number of failed jobs waiting for their retry delay.</summary>
    internal int PendingRetries => _runner.Retries.Count;

    public void Start()
    {
        if (Pool.Start())
        {
            TryLog(() => Log.Started(_logger, Name, Options.Capacity, Options.MinWorkers, Options.MaxWorkers, Options.MaxConcurrency?.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "one per thread", Options.FullMode));
        }
    }

    public void Pause()
    {
        Pool.Pause();
        TryLog(() => Log.Paused(_logger, Name));
    }

    public void Resume()
    {
        Pool.Resume();
        TryLog(() => Log.Resumed(_logger, Name));
    }

    public WorkQueueSnapshot GetSnapshot() => new()
    {
        Name = Name,
        Depth = Depth,
        Capacity = Options.Capacity,
        FullMode = Options.FullMode,
        Workers = Pool.LiveCount,
        BusyWorkers = Pool.BusyCount,
        TargetWorkers = Pool.Target,
        MinWorkers = Pool.MinWorkers,
        MaxWorkers = Pool.MaxWorkers,
        RunningJobs = Pool.RunningJobs,
        MaxConcurrency = Pool.MaxConcurrencyNow,
        WaitingContinuations = Pool.WaitingContinuations,
        Mode = Pool.Mode,
        IsPaused = Pool.IsPaused,
        IsAccepting = _admission.IsOpen,
        Totals = Ledger.Totals,
        QueueWait = _queueWait.Summarize(),
        RunTime = _runTime.Summarize(),
        StuckJobs = Pool.GetStuckJobs(),
    };

    private TimeSpan? OldestWait() =>
        _channel.Reader.TryPeek(out var item) ? _time.GetElapsedTime(item.EnqueuedTimestamp) : null;
}
