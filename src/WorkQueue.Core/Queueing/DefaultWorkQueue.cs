using System.Collections.Concurrent;
using System.Diagnostics;
using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using WorkQueue.Internal;
using WorkQueue.Scaling;
using WorkQueue.Telemetry;
using WorkQueue.Workers;

namespace WorkQueue.Queueing;

/// <summary>
/// A bounded <see cref="Channel{T}"/> of <see cref="WorkItem"/>s, the <see cref="WorkerPool"/> that drains it and the
/// bookkeeping that accounts for every accepted job.
/// </summary>
internal sealed partial class DefaultWorkQueue : IWorkQueue, IQueueGaugeSource, IAsyncDisposable
{
    private readonly Channel<WorkItem> _channel;
    private readonly WorkQueueOptions _options;
    private readonly IServiceProvider _services;
    private readonly WorkQueueMetrics _metrics;
    private readonly ILogger _logger;
    private readonly WorkerPool _pool;
    private readonly AutoScaler _scaler;
    private readonly LatencyWindow _queueWait = new();
    private readonly LatencyWindow _runTime = new();
    private readonly DeadLetterStore _deadLetters;
    private readonly ConcurrentDictionary<long, WorkItem> _pendingRetries = new();
    private readonly ConcurrentQueue<AbandonedJob> _abandonedJobs = new();
    private readonly CancellationTokenSource _abandonCts = new();
    private readonly TaskCompletionSource _drained = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Lock _stopLock = new();
    private readonly KeyValuePair<string, object?> _metricTag;

    // Totals. Accepted = _enqueueAttempts - _rejected; every accepted job ends in exactly one of
    // _succeeded, _deadLettered, _dropped or _abandoned.
    private long _enqueueAttempts;
    private long _rejected;
    private long _started;
    private long _succeeded;
    private long _failed;
    private long _retried;
    private long _deadLettered;
    private long _dropped;
    private long _abandoned;

    private volatile bool _accepting = true;
    private volatile bool _abandoning;
    private int _drainSignaled;
    private Task<ShutdownReport>? _stopTask;

    public DefaultWorkQueue(string name, WorkQueueOptions options, IServiceProvider services, WorkQueueMetrics metrics, ILoggerFactory loggerFactory)
    {
        Name = name;
        _options = options;
        _services = services;
        _metrics = metrics;
        _logger = loggerFactory.CreateLogger("WorkQueue");
        _metricTag = new KeyValuePair<string, object?>(WorkQueueMetrics.QueueTag, name);
        _deadLetters = new DeadLetterStore(options.DeadLetterCapacity);

        var channelOptions = new BoundedChannelOptions(options.Capacity)
        {
            FullMode = options.FullMode == QueueFullMode.DropOldest ? BoundedChannelFullMode.DropOldest : BoundedChannelFullMode.Wait,

            // Many workers read (one waits at a time) and many request threads write. Synchronous continuations stay
            // off: a job must never run inline on the thread that enqueued it.
            SingleReader = false,
            SingleWriter = false,
            AllowSynchronousContinuations = false,
        };
        _channel = options.FullMode == QueueFullMode.DropOldest
            ? Channel.CreateBounded<WorkItem>(channelOptions, OnItemDropped)
            : Channel.CreateBounded<WorkItem>(channelOptions);

        _pool = new WorkerPool(this, _channel.Reader, options.MinWorkers, options.MaxWorkers, options.IdleTimeout, _logger)
        {
            SpinBeforeParking = options.SpinBeforeParking,
        };
        _scaler = new AutoScaler(options.AutoScale, _pool, name, OldestWait, IsIdle, _logger);
        _metrics.Register(this);
    }

    public string Name { get; }

    public KeyValuePair<string, object?> MetricTag => _metricTag;

    public int Depth => _channel.Reader.Count;

    public int Capacity => _options.Capacity;

    public int CurrentWorkers => _pool.LiveCount;

    public int BusyWorkers => _pool.BusyCount;

    public bool IsAbandoning => _abandoning;

    internal WorkerPool Pool => _pool;

    /// <summary>Gets a number that changes whenever a job is offered: what a spinning worker watches, lock-free.</summary>
    internal long EnqueueVersion => Volatile.Read(ref _enqueueAttempts);

    private long InFlight
    {
        get
        {
            // Read the finishing counters before the accepting ones: all only grow, so a concurrent change can make
            // the result too high (the drain waits a little longer), never too low.
            long finished = Volatile.Read(ref _succeeded) + Volatile.Read(ref _deadLettered) + Volatile.Read(ref _dropped) + Volatile.Read(ref _abandoned);
            long rejected = Volatile.Read(ref _rejected);
            return Volatile.Read(ref _enqueueAttempts) - rejected - finished;
        }
    }

    public void Start()
    {
        if (!_pool.Start())
        {
            return;
        }

        Log.Started(_logger, Name, _options.Capacity, _options.MinWorkers, _options.MaxWorkers, _options.FullMode);
    }

    public bool TryEnqueue(Action<CancellationToken> job)
    {
        ArgumentNullException.ThrowIfNull(job);
        return TryWrite(SyncDelegateInvoker.Instance, job, null);
    }

    public bool TryEnqueue(Func<CancellationToken, ValueTask> job)
    {
        ArgumentNullException.ThrowIfNull(job);
        return TryWrite(AsyncDelegateInvoker.Instance, job, null);
    }

    public bool TryEnqueue<TPayload>(IJobHandler<TPayload> handler, TPayload payload)
    {
        ArgumentNullException.ThrowIfNull(handler);
        return TryWrite(HandlerInvoker<TPayload>.Instance, handler, payload);
    }

    public bool TryEnqueue<THandler, TPayload>(TPayload payload)
        where THandler : class, IJobHandler<TPayload> =>
        TryWrite(ScopedHandlerInvoker<THandler, TPayload>.Instance, null, payload);

    public ValueTask EnqueueAsync(Action<CancellationToken> job, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(job);
        return WriteAsync(SyncDelegateInvoker.Instance, job, null, cancellationToken);
    }

    public ValueTask EnqueueAsync(Func<CancellationToken, ValueTask> job, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(job);
        return WriteAsync(AsyncDelegateInvoker.Instance, job, null, cancellationToken);
    }

    public ValueTask EnqueueAsync<TPayload>(IJobHandler<TPayload> handler, TPayload payload, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(handler);
        return WriteAsync(HandlerInvoker<TPayload>.Instance, handler, payload, cancellationToken);
    }

    public ValueTask EnqueueAsync<THandler, TPayload>(TPayload payload, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload> =>
        WriteAsync(ScopedHandlerInvoker<THandler, TPayload>.Instance, null, payload, cancellationToken);

    public WorkQueueSnapshot GetSnapshot() => new()
    {
        Name = Name,
        Depth = Depth,
        Capacity = _options.Capacity,
        FullMode = _options.FullMode,
        Workers = _pool.LiveCount,
        BusyWorkers = _pool.BusyCount,
        TargetWorkers = _pool.Target,
        MinWorkers = _pool.MinWorkers,
        MaxWorkers = _pool.MaxWorkers,
        Mode = _pool.Mode,
        IsPaused = _pool.IsPaused,
        IsAccepting = _accepting,
        Totals = new WorkQueueTotals(
            Enqueued: Volatile.Read(ref _enqueueAttempts) - Volatile.Read(ref _rejected),
            Rejected: Volatile.Read(ref _rejected),
            Started: Volatile.Read(ref _started),
            Succeeded: Volatile.Read(ref _succeeded),
            Failed: Volatile.Read(ref _failed),
            Retried: Volatile.Read(ref _retried),
            DeadLettered: Volatile.Read(ref _deadLettered),
            Dropped: Volatile.Read(ref _dropped),
            Abandoned: Volatile.Read(ref _abandoned),
            InFlight: Math.Max(0, InFlight)),
        QueueWait = _queueWait.Summarize(),
        RunTime = _runTime.Summarize(),
    };

    public IReadOnlyList<DeadLetteredJob> GetDeadLetters() => _deadLetters.ToList();

    public void SetWorkerCount(int count)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(count, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(count, _options.MaxWorkers);
        _pool.SetManual(count);
    }

    public void UseAutoScaling() => _pool.SetAuto();

    public void Pause()
    {
        _pool.Pause();
        Log.Paused(_logger, Name);
    }

    public void Resume()
    {
        _pool.Resume();
        Log.Resumed(_logger, Name);
    }

    public async ValueTask DisposeAsync()
    {
        await StopAsync(TimeSpan.Zero).ConfigureAwait(false);
        _scaler.Dispose();

        // _abandonCts is not disposed: it has no timer to release, and retry delays may still be registered on it.
    }

    private bool TryWrite(JobInvoker invoker, object? target, object? state)
    {
        // The id doubles as the attempt counter, so the fast path pays for one interlocked operation.
        long id = Interlocked.Increment(ref _enqueueAttempts);
        if (!_accepting)
        {
            CountRejection(RejectionReason.QueueStopped);
            return false;
        }

        if (_channel.Writer.TryWrite(new WorkItem(invoker, target, state, id, Stopwatch.GetTimestamp(), attempt: 1)))
        {
            _metrics.Enqueued(_metricTag);
            return true;
        }

        CountRejection(_accepting ? RejectionReason.QueueFull : RejectionReason.QueueStopped);
        return false;
    }

    private ValueTask WriteAsync(JobInvoker invoker, object? target, object? state, CancellationToken cancellationToken)
    {
        // Every call is counted, so that Enqueued + Rejected always equals the calls made (a cancelled one included).
        long id = Interlocked.Increment(ref _enqueueAttempts);
        if (cancellationToken.IsCancellationRequested)
        {
            CountRejection("canceled");
            return ValueTask.FromCanceled(cancellationToken);
        }

        if (!_accepting)
        {
            return ValueTask.FromException(Reject(RejectionReason.QueueStopped));
        }

        var item = new WorkItem(invoker, target, state, id, Stopwatch.GetTimestamp(), attempt: 1);
        if (_channel.Writer.TryWrite(item))
        {
            _metrics.Enqueued(_metricTag);
            return default;
        }

        if (!_accepting)
        {
            return ValueTask.FromException(Reject(RejectionReason.QueueStopped));
        }

        return _options.FullMode == QueueFullMode.Wait
            ? WaitForSpaceAsync(item, cancellationToken)
            : ValueTask.FromException(Reject(RejectionReason.QueueFull));
    }

    private async ValueTask WaitForSpaceAsync(WorkItem item, CancellationToken cancellationToken)
    {
        var timeout = _options.EnqueueTimeout;
        using var timeoutCts = timeout == Timeout.InfiniteTimeSpan ? null : CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeoutCts?.CancelAfter(timeout);
        try
        {
            await _channel.Writer.WriteAsync(item, timeoutCts?.Token ?? cancellationToken).ConfigureAwait(false);
            _metrics.Enqueued(_metricTag);
        }
        catch (OperationCanceledException) when (timeoutCts is not null && !cancellationToken.IsCancellationRequested)
        {
            throw Reject(RejectionReason.QueueFull, $"Queue '{Name}' had no space for the job within its EnqueueTimeout ({timeout}).");
        }
        catch (OperationCanceledException)
        {
            CountRejection("canceled");
            throw;
        }
        catch (ChannelClosedException)
        {
            throw Reject(RejectionReason.QueueStopped);
        }
    }

    private JobRejectedException Reject(RejectionReason reason, string? message = null)
    {
        CountRejection(reason);
        return new JobRejectedException(
            Name,
            reason,
            message ?? (reason == RejectionReason.QueueStopped
                ? $"Queue '{Name}' is stopping and accepts no more jobs."
                : $"Queue '{Name}' is full ({_options.Capacity} jobs) and its FullMode is {_options.FullMode}."));
    }

    private void CountRejection(RejectionReason reason) =>
        CountRejection(reason == RejectionReason.QueueFull ? "queue_full" : "queue_stopped");

    private void CountRejection(string reason)
    {
        Interlocked.Increment(ref _rejected);
        CheckDrained();
        _metrics.Rejected(_metricTag, reason);
    }

    private void OnItemDropped(WorkItem item)
    {
        // The channel calls this on the enqueuing thread after releasing its lock; nothing may escape into the caller's
        // TryEnqueue, which has already succeeded.
        Interlocked.Increment(ref _dropped);
        CheckDrained();
        var info = item.Describe(Name);
        try
        {
            _metrics.Dropped(_metricTag);
            Log.JobDropped(_logger, Name, info.Id, info.Name);
            _options.OnJobDropped?.Invoke(info);
        }
        catch (Exception ex)
        {
            TryLog(() => Log.CallbackFailed(_logger, ex, Name, nameof(WorkQueueOptions.OnJobDropped)));
        }
    }

    /// <summary>Logs on a path that must not fail (shutdown, a drop callback): a logger that throws is ignored.</summary>
    private static void TryLog(Action log)
    {
        try
        {
            log();
        }
        catch (Exception)
        {
            // The logger is what failed; there is nowhere left to report it.
        }
    }

    private TimeSpan? OldestWait() =>
        _channel.Reader.TryPeek(out var item) ? Stopwatch.GetElapsedTime(item.EnqueuedTimestamp) : null;

    private bool IsIdle() => _pool.BusyCount == 0 && _channel.Reader.Count == 0;
}
