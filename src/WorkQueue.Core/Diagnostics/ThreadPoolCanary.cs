using Microsoft.Extensions.Logging;
using WorkQueue.Internal;
using WorkQueue.Telemetry;

namespace WorkQueue.Diagnostics;

/// <summary>
/// The thread-pool starvation alarm, as Node's event-loop lag: every interval, the engine's timer thread (not a pool
/// thread) posts one tiny work item to the CLR thread pool and times how long it waits to run. While one waits, the
/// next ticks read how long it has waited so far, so a pool that is starved right now is seen now, not when it recovers.
/// </summary>
internal sealed partial class ThreadPoolCanary : IThreadPoolCanary, IDisposable
{
    private static readonly Action<ThreadPoolCanary> s_probe = static c => c.OnProbeRan();

    private readonly TimeProvider _time;
    private readonly ThreadPoolCanaryOptions _options;
    private readonly WorkQueueMetrics _metrics;
    private readonly ILogger _logger;
    private readonly Action<Action<ThreadPoolCanary>, ThreadPoolCanary> _post;
    private readonly Func<long> _pendingWorkItems;
    private readonly long _idleTicks;
    private readonly ITimer? _timer;
    private readonly long _thresholdTicks;
    private long _postedAt;
    private long _lastPostAt;
    private long _lagTicks;
    private long _maxLagTicks;
    private long _starvingSinceUtcTicks;

    public ThreadPoolCanary(ThreadPoolCanaryOptions options, TimeProvider time, WorkQueueMetrics metrics, ILogger logger, Action<Action<ThreadPoolCanary>, ThreadPoolCanary>? post = null, Func<long>? pendingWorkItems = null)
    {
        _options = options;
        _time = time;
        _metrics = metrics;
        _logger = logger;
        _post = post ?? (static (probe, canary) => ThreadPool.UnsafeQueueUserWorkItem(probe, canary, preferLocal: false));
        _pendingWorkItems = pendingWorkItems ?? (static () => ThreadPool.PendingWorkItemCount);
        _thresholdTicks = (long)(options.StarvationThreshold.TotalSeconds * time.TimestampFrequency);
        _idleTicks = (long)(options.IdleInterval.TotalSeconds * time.TimestampFrequency);
        _lastPostAt = time.GetTimestamp() - _idleTicks; // the first tick posts, whatever the pool holds
        metrics.RegisterCanary(this);
        if (options.Enabled)
        {
            _timer = time.CreateTimer(static s => ((ThreadPoolCanary)s!).OnTick(), this, options.Interval, options.Interval);
        }
    }

    public ThreadPoolHealth GetHealth()
    {
        long since = Volatile.Read(ref _starvingSinceUtcTicks);
        return new ThreadPoolHealth(
            ToTimeSpan(Volatile.Read(ref _lagTicks)),
            ToTimeSpan(Volatile.Read(ref _maxLagTicks)),
            since != 0,
            since != 0 ? new DateTimeOffset(since, TimeSpan.Zero) : null,
            ThreadPool.ThreadCount,
            ThreadPool.PendingWorkItemCount,
            _options.Enabled);
    }

    /// <summary>Gets the current lag in seconds, for the gauge.</summary>
    public double LagSeconds => ToTimeSpan(Volatile.Read(ref _lagTicks)).TotalSeconds;

    public void Dispose() => _timer?.Dispose();

    /// <summary>On the engine's timer thread: post a canary, or, while the last one still waits, note how long so far.</summary>
    private void OnTick()
    {
        long posted = Volatile.Read(ref _postedAt);
        if (posted != 0)
        {
            Observe(_time.GetTimestamp() - posted, ran: false);
            return;
        }

        // A pool with nothing queued cannot be starving: post only now and then to keep the lag measured, since waking a
        // sleeping pool thread costs far more than the probe (the thread spins for more work before sleeping again).
        long now = _time.GetTimestamp();
        if (_pendingWorkItems() == 0 && now - _lastPostAt < _idleTicks)
        {
            return;
        }

        _lastPostAt = now;
        Volatile.Write(ref _postedAt, now);
        _post(s_probe, this);
    }

    /// <summary>On a pool thread: the canary ran.</summary>
    private void OnProbeRan()
    {
        long waited = _time.GetTimestamp() - Interlocked.Exchange(ref _postedAt, 0);
        _metrics.ThreadPoolLag(ToTimeSpan(waited));
        Observe(waited, ran: true);
    }

    private void Observe(long waitedTicks, bool ran)
    {
        Volatile.Write(ref _lagTicks, waitedTicks);
        long max = Volatile.Read(ref _maxLagTicks);
        while (waitedTicks > max && Interlocked.CompareExchange(ref _maxLagTicks, waitedTicks, max) != max)
        {
            max = Volatile.Read(ref _maxLagTicks);
        }

        if (waitedTicks >= _thresholdTicks)
        {
            // Only the first sign of an episode logs; the timer thread and the pool thread may both see it.
            if (Interlocked.CompareExchange(ref _starvingSinceUtcTicks, _time.GetUtcNow().UtcTicks, 0) == 0)
            {
                _logger.TryLog(static (l, s) => Log.Starving(l, s.Item1, s.Item2, s.Item3), (ToTimeSpan(waitedTicks).TotalMilliseconds, ThreadPool.ThreadCount, ThreadPool.PendingWorkItemCount));
            }
        }
        else if (ran && Interlocked.Exchange(ref _starvingSinceUtcTicks, 0) is long since and not 0)
        {
            var lasted = _time.GetUtcNow() - new DateTimeOffset(since, TimeSpan.Zero);
            _logger.TryLog(static (l, s) => Log.Recovered(l, s.Item1, s.Item2), (lasted.TotalMilliseconds, ToTimeSpan(waitedTicks).TotalMilliseconds));
        }
    }

    private TimeSpan ToTimeSpan(long ticks) => TimeSpan.FromSeconds((double)ticks / _time.TimestampFrequency);

    private static partial class Log
    {
        [LoggerMessage(120, LogLevel.Warning, "The CLR thread pool is starving: a work item has waited {LagMs:F0} ms for a pool thread ({Threads} threads, {Pending} work items queued). Blocking code on the thread pool (sync-over-async such as .Result or .Wait(), blocking I/O, legacy SDKs) is the likely cause: every request, timer and async continuation waits behind it. Move the blocking work onto a WorkQueue queue, whose dedicated threads are off the pool.", EventName = "ThreadPoolStarving")]
        public static partial void Starving(ILogger logger, double lagMs, int threads, long pending);

        [LoggerMessage(121, LogLevel.Information, "The CLR thread pool recovered after {DurationMs:F0} ms of starvation: a work item waited {LagMs:F1} ms.", EventName = "ThreadPoolRecovered")]
        public static partial void Recovered(ILogger logger, double durationMs, double lagMs);
    }
}
