using Microsoft.Extensions.Logging;
using WorkQueue.Workers;

namespace WorkQueue.Scaling;

/// <summary>
/// Grows a pool (in threads) when jobs wait longer than <see cref="AutoScaleOptions.TargetQueueWait"/>. Each started job reports its
/// wait (the fast path: no timer involved). A sampling timer covers the case where every worker is stuck in a long job
/// and nothing starts; it runs only while the queue has work and disarms itself when the queue goes idle, so an idle
/// queue costs no CPU. The enqueuing thread arms it after writing a job (<see cref="OnWorkArrived"/>), not the worker
/// that starts the job, so re-arming after an idle spell is never on the path from a wake-up to the job's first line. Scale-ups are at least <see cref="AutoScaleOptions.ScaleUpCooldown"/> apart; scale-down is
/// idle retirement in the pool (<see cref="WorkQueueOptions.IdleTimeout"/>), which damps flapping in the other direction.
/// </summary>
internal sealed partial class AutoScaler : IDisposable
{
    private readonly AutoScaleOptions _options;
    // The scaler is built before the pool it grows (the pool runs jobs through the runner, which tells the scaler each
    // start's wait), so it reaches the pool through this only as it samples or scales up, not for each job.
    private readonly Func<WorkerPool> _pool;
    private readonly Func<TimeSpan?> _oldestWait;
    private readonly string _queueName;
    private readonly ILogger _logger;
    private readonly ITimer _timer;
    private readonly TimeProvider _time;
    private readonly long _targetTicks;
    private int _armed;
    private long _lastScaleUp;
    private volatile bool _stopped;

    public AutoScaler(AutoScaleOptions options, Func<WorkerPool> pool, string queueName, Func<TimeSpan?> oldestWait, TimeProvider time, ILogger logger)
    {
        _options = options;
        _pool = pool;
        _queueName = queueName;
        _oldestWait = oldestWait;
        _logger = logger;
        _targetTicks = options.TargetQueueWait.Ticks;
        _time = time;

        // On the engine's timer thread, not a thread-pool timer: sampling must go on while the pool is starved.
        _timer = time.CreateTimer(static s => ((AutoScaler)s!).Sample(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    /// <summary>Called by a worker as it starts a job, with how long that job waited.</summary>
    public void OnJobStarted(TimeSpan wait)
    {
        if (wait.Ticks > _targetTicks && _options.Enabled && !_stopped)
        {
            TryScaleUp(wait);
        }
    }

    /// <summary>Called after a job was written to the channel: arms the sampling timer if it is not armed.</summary>
    public void OnWorkArrived()
    {
        // The channel's lock orders this read after the write: a sample that disarms and then finds the queue idle read
        // the channel before the write, so this read sees its disarm.
        if (Volatile.Read(ref _armed) == 0 && _options.Enabled && !_stopped && Interlocked.Exchange(ref _armed, 1) == 0)
        {
            _timer.Change(_options.SampleInterval, _options.SampleInterval);
        }
    }

    public void Stop()
    {
        _stopped = true;
        _timer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    public void Dispose()
    {
        _stopped = true;
        _timer.Dispose();
    }

    private void Sample()
    {
        try
        {
            SampleCore();
        }
        catch (Exception ex)
        {
            // A throwing logger must not end the timer thread (or, on a pool timer, the process).
            try
            {
                Log.SampleFailed(_logger, ex, _queueName);
            }
            catch (Exception)
            {
                // The logger is what failed; there is nowhere left to report it.
            }
        }
    }

    private void SampleCore()
    {
        if (_stopped)
        {
            _timer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            return;
        }

        if (_oldestWait() is { } oldest && oldest.Ticks > _targetTicks)
        {
            TryScaleUp(oldest);
        }

        var pool = _pool();
        if (pool.IsIdle)
        {
            // Stop the timer before clearing the flag: a job written after the clear re-arms it (and its arming cannot be
            // undone by this stop).
            _timer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            Interlocked.Exchange(ref _armed, 0);

            // A job may have been written between the idle check and the clear without arming (it saw _armed == 1).
            if (!pool.IsIdle && Interlocked.Exchange(ref _armed, 1) == 0)
            {
                _timer.Change(_options.SampleInterval, _options.SampleInterval);
            }
        }
    }

    private void TryScaleUp(TimeSpan wait)
    {
        var pool = _pool();
        if (pool.Mode != WorkerMode.Auto || pool.LiveCount >= pool.MaxWorkers)
        {
            return;
        }

        long now = _time.GetTimestamp();
        long last = Volatile.Read(ref _lastScaleUp);
        if (last != 0 && _time.GetElapsedTime(last, now) < _options.ScaleUpCooldown)
        {
            return;
        }

        if (Interlocked.CompareExchange(ref _lastScaleUp, now, last) != last)
        {
            return;
        }

        int added = pool.ScaleUp();
        if (added > 0)
        {
            Log.ScaledUp(_logger, _queueName, added, pool.LiveCount, wait.TotalMilliseconds);
        }
    }

    private static partial class Log
    {
        [LoggerMessage(20, LogLevel.Information, "Queue '{Queue}': added {Added} worker(s), now {Count}; a job waited {WaitMs:F1} ms.", EventName = "ScaledUp")]
        public static partial void ScaledUp(ILogger logger, string queue, int added, int count, double waitMs);

        [LoggerMessage(21, LogLevel.Error, "Queue '{Queue}': an autoscaler sample failed (a logger threw); sampling carries on.", EventName = "ScaleSampleFailed")]
        public static partial void SampleFailed(ILogger logger, Exception exception, string queue);
    }
}
