using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using WorkQueue.Internal;
using WorkQueue.Telemetry;

namespace WorkQueue.Workers;

/// <summary>
/// One queue's small private scheduler: a capped set of dedicated threads, the jobs they start (from the channel and
/// from due retries) and the continuations of the queue's async jobs, which any of its threads may run. This file holds
/// membership and scaling; <c>WorkerPool.Dispatch.cs</c> how work is taken and run (dispatch); <c>WorkerPool.Monitoring.cs</c> the
/// checks for blocked threads and stuck jobs. Membership changes happen under <see cref="_lock"/>; no user code runs
/// under it.
/// </summary>
internal sealed partial class WorkerPool
{
    private readonly object _lock = new();
    private readonly List<WorkerThread> _threads = [];
    private readonly WorkerPoolSettings _settings;
    private readonly IJobExecutor _executor;
    private readonly TimeProvider _time;
    private readonly WorkQueueMetrics _metrics;
    private readonly KeyValuePair<string, object?> _metricTag;
    private readonly ILogger _logger;
    private readonly Func<long> _offers;
    private readonly object? _flowMarker;
    private readonly TaskCompletionSource _allExited = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly ParkingLot _parking;
    private readonly AbandonFlag _abandoning;
    private int _liveCount;
    private int _target;
    private int _compensation;
    private int _nextThreadNumber;
    private int _spinning;
    private WorkerMode _mode = WorkerMode.Auto;
    private volatile bool _paused;
    private volatile bool _closed;
    private bool _started;

    public WorkerPool(
        WorkerPoolSettings settings,
        ChannelReader<WorkItem> reader,
        IJobExecutor executor,
        TimeProvider time,
        WorkQueueMetrics metrics,
        Func<long> offers,
        object? flowMarker,
        AbandonFlag abandoning,
        ILogger logger)
    {
        _settings = settings;
        Reader = reader;
        _executor = executor;
        _time = time;
        _metrics = metrics;
        _metricTag = new KeyValuePair<string, object?>(WorkQueueMetrics.QueueTag, settings.QueueName);
        _offers = offers;
        _flowMarker = flowMarker;
        _abandoning = abandoning;
        _logger = logger;
        _target = settings.MinWorkers;
        _parking = new ParkingLot(() => HasReadyWork, () => MayLead);
        _monitorTimer = time.CreateTimer(static s => ((WorkerPool)s!).OnMonitorTick(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    public ChannelReader<WorkItem> Reader { get; }

    public string QueueName => _settings.QueueName;

    public int MinWorkers => _settings.MinWorkers;

    public int MaxWorkers => _settings.MaxWorkers;

    public bool SpinBeforeParking => _settings.SpinBeforeParking;

    public int LiveCount => Volatile.Read(ref _liveCount);

    public int Target => Volatile.Read(ref _target);

    public WorkerMode Mode => _mode;

    public bool IsPaused => _paused;

    public bool IsAbandoning => _abandoning.IsSet;

    public bool HasLeader => _parking.HasLeader;

    public long Offers => _offers();

    /// <summary>Gets a value indicating whether a thread is parked and could take work now.</summary>
    public bool HasIdleThread => _parking.ParkedCount > 0;

    /// <summary>Gets the number of threads executing job code now.</summary>
    public int BusyCount
    {
        get
        {
            lock (_lock)
            {
                return _threads.Count(t => t.CodeRun is not null);
            }
        }
    }

    /// <summary>Gets the live threads' total wait passes: an idle pool's stays constant.</summary>
    internal long Waits
    {
        get
        {
            lock (_lock)
            {
                return _threads.Sum(t => t.Waits);
            }
        }
    }

    /// <summary>Gets how many times the live threads were put to sleep and woken again.</summary>
    internal long WakeUps
    {
        get
        {
            lock (_lock)
            {
                return _threads.Sum(t => t.WakeUps);
            }
        }
    }

    /// <summary>Gets the number of live threads asleep in their parker now, with no signal on its way.</summary>
    internal int SleepingThreads
    {
        get
        {
            lock (_lock)
            {
                return _threads.Count(t => t.IsAsleep);
            }
        }
    }

    /// <summary>Gets a task that completes when the pool is closed and every thread has exited.</summary>
    public Task AllExited => _allExited.Task;

    /// <summary>Gets how long a parked follower waits before it checks whether it may retire.</summary>
    public int FollowerTimeoutMilliseconds =>
        _mode == WorkerMode.Auto && !_paused && LiveCount > MinWorkers
            ? (int)Math.Min(_settings.IdleTimeout.TotalMilliseconds, int.MaxValue)
            : Timeout.Infinite;

    public bool TryBeginSpin() => Interlocked.CompareExchange(ref _spinning, 1, 0) == 0;

    public void EndSpin() => Volatile.Write(ref _spinning, 0);

    /// <returns><see langword="true"/> if this call started the pool.</returns>
    public bool Start()
    {
        lock (_lock)
        {
            if (_started || _closed)
            {
                return false;
            }

            _started = true;
            SpawnToTargetLocked();
            return true;
        }
    }

    /// <summary>Sets a manual thread count (already checked by the caller) and moves the pool towards it now.</summary>
    public void SetManual(int count)
    {
        lock (_lock)
        {
            _mode = WorkerMode.Manual;
            _target = count;
            ApplyTargetLocked();
        }

        _logger.TryLog(static (l, s) => Log.ManualCount(l, s.QueueName, s.count), (QueueName, count));
    }

    /// <summary>Hands the thread count back to the autoscaler, starting from the current count within the limits.</summary>
    public void SetAuto()
    {
        lock (_lock)
        {
            _mode = WorkerMode.Auto;
            _target = Math.Clamp(_liveCount, MinWorkers, MaxWorkers);
            ApplyTargetLocked();

            // Followers parked in manual mode wait without a timeout; wake them so they park again with the idle timeout.
            _parking.WakeAll();
        }

        _logger.TryLog(static (l, q) => Log.AutoMode(l, q), QueueName);
    }

    /// <summary>Adds threads in automatic mode (half the current count, at least one, up to the cap) when every thread is busy.</summary>
    /// <returns>The number of threads added.</returns>
    public int ScaleUp()
    {
        lock (_lock)
        {
            if (_mode != WorkerMode.Auto || !_started || _closed || _paused || _liveCount >= MaxWorkers)
            {
                return 0;
            }

            // A wait with idle threads is not a capacity problem (the concurrency limit, or a burst being taken).
            if (_parking.ParkedCount > 0)
            {
                return 0;
            }

            int before = _liveCount;
            _target = Math.Min(MaxWorkers, before + Math.Max(1, before / 2));
            SpawnToTargetLocked();
            return _liveCount - before;
        }
    }

    public void Pause()
    {
        _paused = true;
        _parking.SignalLeader();
    }

    public void Resume()
    {
        _paused = false;
        _parking.WakeAll();
    }

    /// <summary>Marks the queue as abandoning: runs starting from now are cancelled at once.</summary>
    public void BeginAbandon() => _abandoning.Set();

    /// <summary>Called once the channel is completed: threads exit when no job is running and nothing waits.</summary>
    public void Close()
    {
        lock (_lock)
        {
            _closed = true;
            _monitorTimer.Dispose();
            _parking.WakeAll();
            _parking.SignalLeader();
            if (_liveCount == 0)
            {
                _allExited.TrySetResult();
            }
        }
    }

    internal void OnThreadStarted() => JobFlow.EnterThread(_flowMarker);

    internal bool TryRetire(WorkerThread thread, bool idleTimedOut)
    {
        int target = EffectiveTarget;
        if (!idleTimedOut && Volatile.Read(ref _liveCount) <= target)
        {
            return false;
        }

        int left;
        lock (_lock)
        {
            if (_liveCount > EffectiveTarget)
            {
                RemoveLocked(thread);
            }
            else if (idleTimedOut && _mode == WorkerMode.Auto && !_paused && _liveCount > MinWorkers)
            {
                RemoveLocked(thread);
                _target = Math.Max(MinWorkers, _liveCount - _compensation);
            }
            else
            {
                return false;
            }

            left = _liveCount;
        }

        _logger.TryLog(static (l, s) => Log.WorkerRetired(l, s.QueueName, s.Name, s.left), (QueueName, thread.Name, left));
        return true;
    }

    internal void OnThreadFaulted(WorkerThread thread, Exception exception) =>
        _logger.TryLog(static (l, s) => Log.WorkerFaulted(l, s.exception, s.QueueName, s.Name), (exception, QueueName, thread.Name));

    internal void OnThreadExited(WorkerThread thread)
    {
        lock (_lock)
        {
            RemoveLocked(thread);
            if (_liveCount == 0 && _closed)
            {
                _allExited.TrySetResult();
                return;
            }

            if (!_closed && _started && _liveCount < EffectiveTarget)
            {
                // A thread died outside any job (a bug): replace it.
                SpawnToTargetLocked();
            }
        }

        // Whoever exits must not leave parked followers without a leader (nor a job it was woken for untaken).
        _parking.WakeFollowerIfLeaderless();
    }

    /// <summary>Gets the target plus the threads added because every thread was blocked, within the cap.</summary>
    private int EffectiveTarget => Math.Min(MaxWorkers, Volatile.Read(ref _target) + Volatile.Read(ref _compensation));

    private void RemoveLocked(WorkerThread thread)
    {
        if (_threads.Remove(thread))
        {
            _liveCount = _threads.Count;
        }

        _parking.Remove(thread);
    }

    private void ApplyTargetLocked()
    {
        if (!_started || _closed)
        {
            return;
        }

        if (_liveCount < EffectiveTarget)
        {
            SpawnToTargetLocked();
        }
        else if (_liveCount > EffectiveTarget)
        {
            // Idle threads retire now; busy ones when their current work ends.
            _parking.WakeAll();
            _parking.SignalLeader();
        }
    }

    private void SpawnToTargetLocked()
    {
        while (_liveCount < EffectiveTarget)
        {
            var thread = new WorkerThread(this, $"WorkQueue:{QueueName}#{++_nextThreadNumber}");
            _threads.Add(thread);
            _liveCount = _threads.Count;
            thread.Start();
        }
    }

    private WorkerThread[] ThreadsSnapshot()
    {
        lock (_lock)
        {
            return [.. _threads];
        }
    }
}
