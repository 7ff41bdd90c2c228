using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using WorkQueue.Accounting;
using WorkQueue.Durability;
using WorkQueue.Execution;
using WorkQueue.Internal;
using WorkQueue.Scaling;
using WorkQueue.Scheduling;
using WorkQueue.Telemetry;
using WorkQueue.Tracking;
using WorkQueue.Workers;

namespace WorkQueue.Queueing;

/// <summary>
/// Builds one queue from its parts and holds them together. A job's path reads one way: <see cref="QueueProducer"/>
/// (admit, count, write) -> the channel -> <see cref="WorkerPool"/> (where and when it runs) -> <see cref="JobRunner"/>
/// (what it does, how it ends) -> <see cref="IJobOutcomes"/> (where that goes) -> <see cref="JobLedger"/> (every accepted
/// job ends exactly once). A durable queue is the same, with its <see cref="IJobStore"/> as the source of jobs (through
/// <see cref="IJobIntake"/>, the bounded prefetch) and, through <see cref="StoreOutcomes"/>, the place their outcomes go.
/// </summary>
internal sealed partial class QueueRuntime : IQueueGaugeSource, IJobIntake, IQueueJobs
{
    private readonly Lock _intakeLock = new();
    private bool _intakeClosed;
    private bool _intakePaused;
    private readonly Channel<WorkItem> _channel;
    private readonly WorkQueueMetrics _metrics;
    private readonly ILogger _logger;
    private readonly Admission _admission;
    private readonly JobRunner _runner;
    private readonly IJobOutcomes _outcomes;
    private readonly RetryScheduler _retries;
    private readonly AbandonReporter _abandoned;
    private readonly AutoScaler _scaler;
    private readonly LatencyWindow _queueWait = new();
    private readonly LatencyWindow _runTime = new();
    private readonly TimeProvider _time;
    private readonly ScheduledJobSet _scheduled;

    public QueueRuntime(
        string name,
        WorkQueueOptions options,
        WorkQueueProvider owner,
        IServiceProvider services,
        WorkQueueMetrics metrics,
        WorkQueueEnvironment environment,
        ILoggerFactory loggerFactory,
        IJobStore? store = null)
    {
        Name = name;
        Store = store;
        Options = options;
        Owner = owner;
        _metrics = metrics;
        _time = environment.Time;
        _logger = loggerFactory.CreateLogger("WorkQueue");
        MetricTag = new KeyValuePair<string, object?>(WorkQueueMetrics.QueueTag, name);
        DeadLetters = new DeadLetterStore(options.DeadLetterCapacity);
        _admission = new Admission(owner.FlowMarker);

        // A durable queue's keys live in its store, with its jobs.
        Ledger = new JobLedger { Keys = store is null ? new IdempotencyKeys(environment.Time, options.IdempotencyKeyRetention) : null };

        // A durable queue's capacity applies in its store; its channel is the prefetch, which the store never overfills.
        var channelOptions = new BoundedChannelOptions(store?.PrefetchCapacity ?? options.Capacity)
        {
            FullMode = options.FullMode == QueueFullMode.DropOldest && store is null ? BoundedChannelFullMode.DropOldest : BoundedChannelFullMode.Wait,

            // Many threads read (one waits at a time) and many request threads write. Synchronous continuations stay
            // off: a job must never run inline on the thread that enqueued it.
            SingleReader = false,
            SingleWriter = false,
            AllowSynchronousContinuations = false,
        };

        // The runner is built before the pool, which runs jobs through it, and gets everything in its constructor: the
        // abandon flag the pool will set; where outcomes go, picked once here by the kind of queue (an in-memory queue's
        // due retries go to HandDue, as its due scheduled jobs do); the autoscaler, which reaches the pool it grows only
        // as it scales.
        var abandoning = new AbandonFlag();
        _abandoned = new AbandonReporter(name, Ledger, _logger);
        _retries = new RetryScheduler(_time, HandDue, _abandoned.Report);
        _outcomes = store is null
            ? new InMemoryOutcomes(Ledger, _retries, DeadLetters, _abandoned, abandoning)
            : new StoreOutcomes(Ledger, store);
        _scaler = new AutoScaler(options.AutoScale, () => Pool!, name, OldestWait, _time, _logger);
        _runner = new JobRunner(name, options, services, Ledger, _outcomes, metrics, _queueWait, _runTime, environment, abandoning, _scaler, _logger);
        _channel = options.FullMode == QueueFullMode.DropOldest && store is null
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
        Pool = new WorkerPool(settings, _channel.Reader, _runner, _time, metrics, () => Ledger.Offers, owner.FlowMarker, abandoning, _logger);
        _scheduled = new ScheduledJobSet(owner.Scheduler, options.MaxScheduledJobs, _time, HandDue);
        Tracker = new JobTracker(_time, options.FinishedJobRetention, options.MaxFinishedJobs);
        Producer = new QueueProducer(name, _channel.Writer, Ledger, _admission, options, metrics, _time, OnWorkArrived, _scheduled, Tracker, this);
        Control = new QueueControl(this);
        _metrics.Register(this);
    }

    public string Name { get; }

    public WorkQueueOptions Options { get; }

    /// <summary>Gets the durable store the queue's jobs come from, or <see langword="null"/> for an in-memory queue.</summary>
    public IJobStore? Store { get; }

    public WorkQueueProvider Owner { get; }

    public JobLedger Ledger { get; }

    public DeadLetterStore DeadLetters { get; }

    /// <summary>Gets the jobs whose id was handed out, by id (in-memory queues; a durable queue tracks none).</summary>
    public JobTracker Tracker { get; }

    public WorkerPool Pool { get; }

    public QueueProducer Producer { get; }

    public QueueControl Control { get; }

    public KeyValuePair<string, object?> MetricTag { get; }

    public int Depth => _channel.Reader.Count;

    public int Capacity => Options.Capacity;

    /// <inheritdoc/>
    public int Scheduled => _scheduled.Count;

    /// <inheritdoc/>
    public int FreeSlots => Math.Max(0, (Store?.PrefetchCapacity ?? Options.Capacity) - _channel.Reader.Count);

    public int CurrentWorkers => Pool.LiveCount;

    public int BusyWorkers => Pool.BusyCount;

    public int RunningJobs => Pool.RunningJobs;

    public int WaitingContinuations => Pool.WaitingContinuations;

    /// <summary>Gets the number of failed jobs waiting for their retry delay.</summary>
    internal int PendingRetries => _retries.Count;

    public void Start()
    {
        if (Pool.Start())
        {
            Store?.Start(this);
            TryLog(() => Log.Started(_logger, Name, Options.Capacity, Options.MinWorkers, Options.MaxWorkers, Options.MaxConcurrency?.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "one per thread", Options.FullMode));
        }
    }

    public void Pause()
    {
        Pool.Pause();
        PauseIntake();
        TryLog(() => Log.Paused(_logger, Name));
    }

    public void Resume()
    {
        ResumeIntake();
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
        Durable = Store?.GetSnapshot(),
        Scheduled = _scheduled.Count,
    };

    public IReadOnlyList<ScheduledJob> GetScheduledJobs(int maxCount) =>
        [.. _scheduled.List(maxCount).Select(e => new ScheduledJob(e.Item.Describe(Name), e.DueAt, e.ScheduledAt))];

    /// <inheritdoc/>
    public bool TryAccept(JobInvoker invoker, object? target, object? state, int attempt, TimeSpan waitedInStore)
    {
        // Dated back by the wait in the store, so the queue wait (metrics, autoscaler) counts from when the job was ready.
        long enqueuedAt = _time.GetTimestamp();
        if (waitedInStore > TimeSpan.Zero)
        {
            enqueuedAt -= (long)(Math.Min(waitedInStore.TotalSeconds, TimeSpan.FromDays(1).TotalSeconds) * _time.TimestampFrequency);
        }

        // Under the lock, so that a stop that closes the intake and hands back the prefetch never misses a job written
        // just after it looked.
        lock (_intakeLock)
        {
            if (_intakeClosed || _intakePaused)
            {
                return false;
            }

            long id = Ledger.Offer();
            if (_channel.Writer.TryWrite(new WorkItem(invoker, target, state, id, enqueuedAt, attempt)))
            {
                _metrics.Enqueued(MetricTag);
                OnWorkArrived();
                return true;
            }

            Ledger.Rejected();
            return false;
        }
    }

    /// <summary>A durable queue stops taking fetched jobs and hands back the ones that have not started.</summary>
    private void CloseIntake()
    {
        if (Store is null)
        {
            return;
        }

        Store.StopFetching();
        lock (_intakeLock)
        {
            _intakeClosed = true;
        }

        ReturnPrefetched();
    }

    /// <summary>
    /// A paused durable queue takes no fetched jobs and hands back the ones that have not started, so the queue's other
    /// instances run them now; the store stops fetching and reclaiming until <see cref="ResumeIntake"/>.
    /// </summary>
    private void PauseIntake()
    {
        if (Store is null)
        {
            return;
        }

        lock (_intakeLock)
        {
            _intakePaused = true;
        }

        Store.SetPaused(true);
        ReturnPrefetched();
    }

    private void ResumeIntake()
    {
        if (Store is null)
        {
            return;
        }

        lock (_intakeLock)
        {
            _intakePaused = false;
        }

        Store.SetPaused(false);
    }

    /// <summary>Hands a durable queue's fetched jobs that have not started back to its store (its outcomes do).</summary>
    private void ReturnPrefetched()
    {
        while (_channel.Reader.TryRead(out var item))
        {
            _outcomes.NotStarted(item);
        }
    }

    /// <summary>
    /// A job was written to the channel: a parked thread is woken for it if nobody leads, and the pool's monitor and the
    /// autoscaler's sampling run while there is work.
    /// </summary>
    private void OnWorkArrived()
    {
        Pool.OnJobWritten();
        _scaler.OnWorkArrived();
    }

    private TimeSpan? OldestWait() =>
        _channel.Reader.TryPeek(out var item) ? _time.GetElapsedTime(item.EnqueuedTimestamp) : null;
}
