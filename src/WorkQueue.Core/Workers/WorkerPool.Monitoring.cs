using System.Collections.Concurrent;
using WorkQueue.Internal;
using WorkQueue.Telemetry;

namespace WorkQueue.Workers;

/// <summary>
/// A tick every 100 ms while the pool has work (none while it is idle), on the engine's timer thread. Work arms it as it
/// arrives (a job written to the channel, a retry coming due, a continuation posted), on the thread that brings it,
/// never on a worker about to start a job: re-arming the timer after an idle spell (its lock, and a wake-up of the timer
/// thread) would otherwise sit between a wake-up and the job's first line. It looks for
/// continuations that cannot run because every thread is occupied (a job blocking on async code), adds a thread for
/// them up to <c>MaxWorkers</c>, reports the jobs as blocked when it cannot, and reports jobs that outlived their
/// timeout or the stuck threshold.
/// </summary>
internal sealed partial class WorkerPool
{
    private const string BlockedReason = "every thread of the queue was busy in job code while continuations waited for one";
    private const string OverdueReason = "ran longer than its JobTimeout or the StuckJobThreshold without returning";

    /// <summary>How often the monitor looks, while armed.</summary>
    internal static readonly TimeSpan MonitorInterval = TimeSpan.FromMilliseconds(100);

    /// <summary>How long continuations wait without progress, at <c>MaxWorkers</c>, before the jobs holding the threads are reported as blocked.</summary>
    internal static readonly TimeSpan BlockedReportDelay = TimeSpan.FromSeconds(1);

    private readonly ITimer _monitorTimer;
    private readonly ConcurrentDictionary<string, byte> _blockingTypesLogged = new(StringComparer.Ordinal);

    // Read by every enqueue (through OnWorkArrived), so it sits apart from the fields the workers write on every job.
    private PaddedInt32 _monitorArmed;
    private long _lastProgress = -1;
    private int _blockedTicks;

    /// <summary>Gets the jobs reported as stuck now.</summary>
    public IReadOnlyList<StuckJob> GetStuckJobs()
    {
        var threshold = StuckThreshold;
        var stuck = new List<StuckJob>();
        foreach (var run in RunningRuns())
        {
            var elapsed = _time.GetElapsedTime(run.StartTimestamp);
            if ((run.Blocked || elapsed > threshold) && TryDescribe(run, out var item, out string name))
            {
                stuck.Add(new StuckJob(JobIds.Format(item.Id), QueueName, name, item.Attempt, elapsed, run.Blocked ? BlockedReason : OverdueReason));
            }
        }

        return stuck;
    }

    /// <summary>
    /// Reads which job a run is running, for a report. Reports read other threads' runs without a lock: the run may
    /// have just ended (its item cleared) or moved on to its next job, so the read may be stale or even torn (fields of
    /// two jobs). A report is best effort and must never throw: it backs snapshots, the admin endpoints and the monitor.
    /// </summary>
    private static bool TryDescribe(JobRun run, out WorkItem item, out string name)
    {
        item = run.Item;
        if (item.Invoker is null)
        {
            name = string.Empty;
            return false;
        }

        try
        {
            name = item.Invoker.Describe(item.Target);
            return true;
        }
        catch (Exception)
        {
            // A torn read paired one job's invoker with another's target.
            name = string.Empty;
            return false;
        }
    }

    private TimeSpan StuckThreshold => _settings.JobTimeout ?? _settings.StuckJobThreshold;

    public bool IsIdle => Volatile.Read(ref _running) == 0 && _ready.IsEmpty && _retries.IsEmpty && Reader.Count == 0;

    /// <summary>Arms the monitor, if it is not armed, for work that was just handed to the pool or written to its channel.</summary>
    public void OnWorkArrived() => ArmMonitor();

    private void ArmMonitor()
    {
        if (Volatile.Read(ref _monitorArmed.Value) == 0 && Interlocked.Exchange(ref _monitorArmed.Value, 1) == 0 && !_closed)
        {
            _monitorTimer.Change(MonitorInterval, MonitorInterval);
        }
    }

    private void OnMonitorTick()
    {
        try
        {
            CheckBlockedThreads();
            CheckStuckJobs();
        }
        catch (Exception ex)
        {
            // A throwing logger or metrics listener must not end the engine's timer thread or the process.
            _logger.TryLog(static (l, s) => Log.MonitorFailed(l, s.ex, s.QueueName), (ex, QueueName));
        }

        if (IsIdle)
        {
            // Stop the timer before clearing the flag: work that arrives after the clear re-arms it, and a check right
            // after the clear catches work that arrived in between without arming.
            _monitorTimer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            Interlocked.Exchange(ref _monitorArmed.Value, 0);
            if (!IsIdle)
            {
                ArmMonitor();
            }
        }
    }

    private void CheckBlockedThreads()
    {
        long progress = Volatile.Read(ref _continuationsRun);
        bool waiting = !_ready.IsEmpty && _parking.ParkedCount == 0;
        bool progressed = progress != _lastProgress;
        _lastProgress = progress;
        if (!waiting)
        {
            _blockedTicks = 0;
            if (Volatile.Read(ref _compensation) > 0 && _parking.ParkedCount > 0)
            {
                // Threads are idle again: the extra threads retire as they find nothing to do.
                Interlocked.Exchange(ref _compensation, 0);
                _parking.WakeAll();
            }

            return;
        }

        if (progressed)
        {
            _blockedTicks = 0;
            return;
        }

        _blockedTicks++;
        var holders = new List<JobRun>();
        foreach (var thread in ThreadsSnapshot())
        {
            if (thread.CodeRun is { } run)
            {
                holders.Add(run);
            }
        }

        if (_blockedTicks == 1)
        {
            _metrics.SyncOverAsync(_metricTag, WorkQueueMetrics.BlockedThreadsDetection);
            foreach (var run in holders)
            {
                ReportBlockingJobType(run, Log.BlockedThreads);
            }
        }

        bool added = false;
        lock (_lock)
        {
            if (!_closed && _started && _liveCount < MaxWorkers)
            {
                _compensation = Math.Min(MaxWorkers, _liveCount + 1) - _target;
                SpawnToTargetLocked();
                added = true;
            }
        }

        if (added)
        {
            _blockedTicks = 0;
            _logger.TryLog(static (l, s) => Log.ThreadAdded(l, s.QueueName, s.LiveCount, s.Count), (QueueName, LiveCount, _ready.Count));
            return;
        }

        if (_blockedTicks * MonitorInterval >= BlockedReportDelay)
        {
            foreach (var run in holders)
            {
                run.Blocked = true;
            }
        }
    }

    private void CheckStuckJobs()
    {
        var threshold = StuckThreshold;
        foreach (var run in RunningRuns())
        {
            var elapsed = _time.GetElapsedTime(run.StartTimestamp);
            if ((run.Blocked || elapsed > threshold) && TryDescribe(run, out var item, out string name) && Interlocked.Exchange(ref run.StuckReported, 1) == 0)
            {
                _metrics.Stuck(_metricTag);
                _logger.TryLog(
                    static (l, s) => Log.JobStuck(l, s.QueueName, s.Id, s.name, s.TotalMilliseconds, s.Item5),
                    (QueueName, item.Id, name, elapsed.TotalMilliseconds, run.Blocked ? BlockedReason : OverdueReason));
            }
        }
    }

    /// <summary>Logs once per job type (not per job) that a job of that type looks like it blocks on async code.</summary>
    private void ReportBlockingJobType(JobRun run, Action<Microsoft.Extensions.Logging.ILogger, string, string> log)
    {
        if (TryDescribe(run, out _, out string name) && _blockingTypesLogged.TryAdd(name, 0))
        {
            _logger.TryLog(static (l, s) => s.log(l, s.QueueName, s.name), (log, QueueName, name));
        }
    }
}
