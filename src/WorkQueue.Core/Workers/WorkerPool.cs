using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using WorkQueue.Internal;
using WorkQueue.Queueing;

namespace WorkQueue.Workers;

/// <summary>
/// The capped set of dedicated worker threads behind one queue: how many there are, which one leads, which are parked.
/// All membership changes happen under <see cref="_lock"/>; no user code ever runs under it.
/// </summary>
internal sealed partial class WorkerPool
{
    private readonly object _lock = new();
    private readonly List<Worker> _workers = [];
    private readonly List<Worker> _followers = [];
    private readonly DefaultWorkQueue _queue;
    private readonly ILogger _logger;
    private readonly TaskCompletionSource _allExited = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private Worker? _leader;
    private int _liveCount;
    private int _followerCount;
    private int _busy;
    private int _target;
    private int _nextWorkerNumber;
    private int _spinning;
    private WorkerMode _mode = WorkerMode.Auto;
    private volatile bool _paused;
    private bool _started;
    private bool _closed;

    public WorkerPool(DefaultWorkQueue queue, ChannelReader<WorkItem> reader, int minWorkers, int maxWorkers, TimeSpan idleTimeout, ILogger logger)
    {
        _queue = queue;
        Reader = reader;
        MinWorkers = minWorkers;
        MaxWorkers = maxWorkers;
        IdleTimeoutMilliseconds = (int)Math.Min(idleTimeout.TotalMilliseconds, int.MaxValue);
        _target = minWorkers;
        _logger = logger;
    }

    public ChannelReader<WorkItem> Reader { get; }

    public int MinWorkers { get; }

    public int MaxWorkers { get; }

    public int IdleTimeoutMilliseconds { get; }

    public bool SpinBeforeParking { get; init; }

    /// <summary>Gets a value indicating whether a worker is waiting on the channel now.</summary>
    public bool HasLeader => Volatile.Read(ref _leader) is not null;

    public long EnqueueVersion => _queue.EnqueueVersion;

    public bool TryBeginSpin() => Interlocked.CompareExchange(ref _spinning, 1, 0) == 0;

    public void EndSpin() => Volatile.Write(ref _spinning, 0);

    public int LiveCount => Volatile.Read(ref _liveCount);

    public int BusyCount => Volatile.Read(ref _busy);

    public int Target => Volatile.Read(ref _target);

    public WorkerMode Mode => _mode;

    public bool IsPaused => _paused;

    public bool IsAbandoning => _queue.IsAbandoning;

    /// <summary>Gets the live workers' total wait passes (see <see cref="WorkerSynchronizationContext.Wakeups"/>).</summary>
    internal long Wakeups
    {
        get
        {
            lock (_lock)
            {
                return _workers.Sum(w => w.Context.Wakeups);
            }
        }
    }

    /// <summary>Gets a task that completes when the pool is closed and every worker thread has exited.</summary>
    public Task AllExited => _allExited.Task;

    /// <summary>Gets how long a parked follower waits before it checks whether it may retire.</summary>
    public int FollowerTimeoutMilliseconds =>
        _mode == WorkerMode.Auto && !_paused && LiveCount > MinWorkers ? IdleTimeoutMilliseconds : Timeout.Infinite;

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

    /// <summary>Sets a manual worker count (already clamped by the caller) and moves the pool towards it now.</summary>
    public void SetManual(int count)
    {
        lock (_lock)
        {
            _mode = WorkerMode.Manual;
            _target = count;
            ApplyTargetLocked();
        }

        Log.ManualCount(_logger, _queue.Name, count);
    }

    /// <summary>Hands the worker count back to the autoscaler, starting from the current count within the limits.</summary>
    public void SetAuto()
    {
        lock (_lock)
        {
            _mode = WorkerMode.Auto;
            _target = Math.Clamp(_liveCount, MinWorkers, MaxWorkers);
            ApplyTargetLocked();

            // Followers parked in manual mode wait without a timeout; wake them so they park again with the idle timeout.
            SignalAllLocked();
        }

        Log.AutoMode(_logger, _queue.Name);
    }

    /// <summary>Adds workers in automatic mode (half the current count, at least one, up to the cap).</summary>
    /// <returns>The number of workers added.</returns>
    public int ScaleUp()
    {
        lock (_lock)
        {
            if (_mode != WorkerMode.Auto || !_started || _closed || _paused || _liveCount >= MaxWorkers)
            {
                return 0;
            }

            // Only add threads when every worker is busy: a wait with idle workers is not a capacity problem.
            if (Volatile.Read(ref _busy) < _liveCount)
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
        lock (_lock)
        {
            _paused = true;
            _leader?.Signal();
        }
    }

    public void Resume()
    {
        lock (_lock)
        {
            _paused = false;
            SignalAllLocked();
        }
    }

    /// <summary>Called when the channel has been completed: every parked worker wakes up and exits.</summary>
    public void Close()
    {
        lock (_lock)
        {
            _closed = true;
            SignalAllLocked();
            if (_liveCount == 0)
            {
                _allExited.TrySetResult();
            }
        }
    }

    public void CancelRunningJobs()
    {
        Worker[] workers;
        lock (_lock)
        {
            workers = [.. _workers];
        }

        foreach (var worker in workers)
        {
            worker.CancelForShutdown();
        }
    }

    /// <summary>Takes every still-running job away from its worker, for the shutdown report.</summary>
    public List<WorkItem> ClaimStillRunning()
    {
        Worker[] workers;
        lock (_lock)
        {
            workers = [.. _workers];
        }

        var claimed = new List<WorkItem>();
        foreach (var worker in workers)
        {
            if (worker.TryClaimStillRunning(out var item))
            {
                claimed.Add(item);
            }
        }

        return claimed;
    }

    internal void Execute(in WorkItem item, Worker worker)
    {
        Interlocked.Increment(ref _busy);
        try
        {
            _queue.Execute(item, worker);
        }
        finally
        {
            Interlocked.Decrement(ref _busy);
        }
    }

    internal ParkRole Park(Worker worker)
    {
        lock (_lock)
        {
            if (_closed && Reader.Completion.IsCompleted)
            {
                return ParkRole.Exit;
            }

            if (_paused || _leader is not null)
            {
                _followers.Add(worker);
                _followerCount = _followers.Count;
                return ParkRole.Follower;
            }

            _leader = worker;
            return ParkRole.Leader;
        }
    }

    internal void Unpark(Worker worker)
    {
        lock (_lock)
        {
            if (_followers.Remove(worker))
            {
                _followerCount = _followers.Count;
            }
        }
    }

    /// <summary>The leader got a job (or stood down): hand the lead to the most recently parked follower.</summary>
    internal void Resign(Worker worker)
    {
        lock (_lock)
        {
            if (_leader == worker)
            {
                _leader = null;
            }

            if (!_paused)
            {
                SignalOneFollowerLocked();
            }
        }
    }

    /// <summary>
    /// A worker took a job. If nobody leads while followers are parked, wake one so that the next enqueue (or the rest of
    /// a burst) finds a worker waiting on the channel.
    /// </summary>
    internal void OnItemTaken()
    {
        if (Volatile.Read(ref _followerCount) == 0 || Volatile.Read(ref _leader) is not null)
        {
            return;
        }

        lock (_lock)
        {
            if (_leader is null && !_paused)
            {
                SignalOneFollowerLocked();
            }
        }
    }

    internal bool LeaderShouldStandDown(Worker worker)
    {
        lock (_lock)
        {
            return _paused || _liveCount > _target || _closed;
        }
    }

    internal bool TryRetire(Worker worker, bool idleTimedOut)
    {
        if (!idleTimedOut && Volatile.Read(ref _liveCount) <= Volatile.Read(ref _target))
        {
            return false;
        }

        int left;
        lock (_lock)
        {
            if (_liveCount > _target)
            {
                RemoveLocked(worker);
            }
            else if (idleTimedOut && _mode == WorkerMode.Auto && !_paused && _liveCount > MinWorkers)
            {
                RemoveLocked(worker);
                _target = _liveCount;
            }
            else
            {
                return false;
            }

            // This worker may have been handed the lead as it decided to retire: pass it on now, not at thread exit.
            if (_leader is null && !_paused && !_closed)
            {
                SignalOneFollowerLocked();
            }

            left = _liveCount;
        }

        Log.WorkerRetired(_logger, _queue.Name, worker.Name, left);
        return true;
    }

    internal void OnBookkeepingFailed(Worker worker, Exception exception)
    {
        try
        {
            Log.BookkeepingFailed(_logger, exception, _queue.Name, worker.Name);
        }
        catch (Exception)
        {
            // The logger itself is what failed; there is nowhere left to report it.
        }
    }

    internal void OnWorkerFaulted(Worker worker, Exception exception) => Log.WorkerFaulted(_logger, exception, _queue.Name, worker.Name);

    internal void OnWorkerExited(Worker worker)
    {
        lock (_lock)
        {
            RemoveLocked(worker);
            if (_liveCount == 0 && _closed)
            {
                _allExited.TrySetResult();
                return;
            }

            if (!_closed && _started && _liveCount < _target && !Reader.Completion.IsCompleted)
            {
                // A worker died outside any job (a bug, or a fault in a posted callback): replace it.
                SpawnToTargetLocked();
            }

            if (!_closed && !_paused && _leader is null)
            {
                // Whoever exits must not leave parked followers without a leader.
                SignalOneFollowerLocked();
            }
        }
    }

    private void RemoveLocked(Worker worker)
    {
        if (_workers.Remove(worker))
        {
            _liveCount = _workers.Count;
        }

        if (_followers.Remove(worker))
        {
            _followerCount = _followers.Count;
        }

        if (_leader == worker)
        {
            _leader = null;
        }
    }

    private void ApplyTargetLocked()
    {
        if (!_started || _closed)
        {
            return;
        }

        if (_liveCount < _target)
        {
            SpawnToTargetLocked();
        }
        else if (_liveCount > _target)
        {
            // Idle workers retire now; busy ones when their current job ends.
            SignalAllLocked();
        }
    }

    private void SpawnToTargetLocked()
    {
        while (_liveCount < _target)
        {
            var worker = new Worker(this, $"WorkQueue:{_queue.Name}#{++_nextWorkerNumber}");
            _workers.Add(worker);
            _liveCount = _workers.Count;
            worker.Start();
        }
    }

    private void SignalOneFollowerLocked()
    {
        if (_followers.Count == 0)
        {
            return;
        }

        var worker = _followers[^1];
        _followers.RemoveAt(_followers.Count - 1);
        _followerCount = _followers.Count;
        worker.Signal();
    }

    private void SignalAllLocked()
    {
        _leader?.Signal();
        foreach (var follower in _followers)
        {
            follower.Signal();
        }

        _followers.Clear();
        _followerCount = 0;
    }

    private static partial class Log
    {
        [LoggerMessage(1, LogLevel.Information, "Queue '{Queue}': worker count set manually to {Count}.", EventName = "ManualWorkerCount")]
        public static partial void ManualCount(ILogger logger, string queue, int count);

        [LoggerMessage(2, LogLevel.Information, "Queue '{Queue}': worker count handed back to the autoscaler.", EventName = "AutoWorkerCount")]
        public static partial void AutoMode(ILogger logger, string queue);

        [LoggerMessage(3, LogLevel.Debug, "Queue '{Queue}': worker {Worker} retired; {Count} left.", EventName = "WorkerRetired")]
        public static partial void WorkerRetired(ILogger logger, string queue, string worker, int count);

        [LoggerMessage(4, LogLevel.Critical, "Queue '{Queue}': worker {Worker} faulted outside any job.", EventName = "WorkerFaulted")]
        public static partial void WorkerFaulted(ILogger logger, Exception exception, string queue, string worker);

        [LoggerMessage(5, LogLevel.Error, "Queue '{Queue}': worker {Worker} failed in bookkeeping after a job (a logger or metrics listener threw); the job was already accounted for.", EventName = "BookkeepingFailed")]
        public static partial void BookkeepingFailed(ILogger logger, Exception exception, string queue, string worker);
    }
}
