using System.Diagnostics;

namespace WorkQueue.Queueing;

internal sealed partial class DefaultWorkQueue
{
    public Task<ShutdownReport> StopAsync(TimeSpan drainTimeout, CancellationToken cancellationToken = default)
    {
        if (drainTimeout != Timeout.InfiniteTimeSpan)
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(drainTimeout, TimeSpan.Zero);

            // The longest finite wait Task.WaitAsync accepts; checked here, before the queue stops accepting.
            ArgumentOutOfRangeException.ThrowIfGreaterThan(drainTimeout, TimeSpan.FromMilliseconds(uint.MaxValue - 1));
        }

        TaskCompletionSource<ShutdownReport> stop;
        lock (_stopLock)
        {
            if (_stopTask is not null)
            {
                return _stopTask;
            }

            stop = new TaskCompletionSource<ShutdownReport>(TaskCreationOptions.RunContinuationsAsynchronously);
            _stopTask = stop.Task;
        }

        // Started outside the lock: with a zero timeout the whole stop (cancelling jobs' tokens runs their callbacks)
        // can run synchronously, and that must not happen while holding it.
        _ = RunStopAsync(stop, drainTimeout, cancellationToken);
        return stop.Task;
    }

    private async Task RunStopAsync(TaskCompletionSource<ShutdownReport> stop, TimeSpan drainTimeout, CancellationToken cancellationToken)
    {
        try
        {
            stop.TrySetResult(await StopCoreAsync(drainTimeout, cancellationToken).ConfigureAwait(false));
        }
        catch (Exception ex)
        {
            stop.TrySetException(ex);
        }
    }

    /// <summary>Once the queue stops accepting, completes the channel as soon as nothing is in flight.</summary>
    private void CheckDrained()
    {
        if (_accepting || InFlight != 0 || Interlocked.Exchange(ref _drainSignaled, 1) != 0)
        {
            return;
        }

        _channel.Writer.TryComplete();
        _pool.Close();
        _drained.TrySetResult();
    }

    private async Task<ShutdownReport> StopCoreAsync(TimeSpan drainTimeout, CancellationToken cancellationToken)
    {
        var stopwatch = Stopwatch.StartNew();
        _accepting = false;

        // Pairs with the interlocked increment in TryWrite/WriteAsync: either the enqueue sees _accepting == false, or
        // this thread sees its attempt in InFlight and waits for it.
        Interlocked.MemoryBarrier();
        TryLog(() => Log.Stopping(_logger, Name, Depth, _pool.BusyCount));

        // A paused queue could never drain: stopping resumes it, so queued jobs get their chance before the deadline.
        _pool.Resume();
        CheckDrained();

        bool drained = await WaitAsync(_drained.Task, drainTimeout, cancellationToken).ConfigureAwait(false);
        if (!drained)
        {
            Abandon();
            if (!await WaitAsync(_drained.Task, _options.ShutdownGracePeriod, CancellationToken.None).ConfigureAwait(false))
            {
                foreach (var item in _pool.ClaimStillRunning())
                {
                    ReportAbandoned(item, AbandonReason.StillRunning);
                }
            }
        }

        _scaler.Stop();

        // Workers exit once the channel is complete; a worker stuck in a job that ignores its token is left behind
        // (it is a background thread and its job was reported).
        await WaitAsync(_pool.AllExited, _options.ShutdownGracePeriod, CancellationToken.None).ConfigureAwait(false);
        _metrics.Unregister(this);

        var report = new ShutdownReport(Name, drained, [.. _abandonedJobs], stopwatch.Elapsed);
        TryLog(() =>
        {
            if (drained)
            {
                Log.Drained(_logger, Name, stopwatch.Elapsed.TotalMilliseconds);
            }
            else
            {
                Log.StoppedWithAbandoned(_logger, Name, report.Abandoned.Count, stopwatch.Elapsed.TotalMilliseconds);
            }
        });

        return report;
    }

    private void Abandon()
    {
        _abandoning = true;
        Interlocked.MemoryBarrier();

        // Completing the writer fails any enqueue still waiting for space (it is counted as rejected).
        _channel.Writer.TryComplete();

        // Cancels the retry delays (on the thread pool: nothing registered there may hold up the shutdown).
        _ = _abandonCts.CancelAsync();
        foreach (var id in _pendingRetries.Keys)
        {
            if (_pendingRetries.TryRemove(id, out var retry))
            {
                ReportAbandoned(retry, AbandonReason.RetryPending);
            }
        }

        try
        {
            while (_channel.Reader.TryRead(out var item))
            {
                ReportAbandoned(item, AbandonReason.NotStarted);
            }
        }
        finally
        {
            _pool.CancelRunningJobs();
            _pool.Close();
        }
    }

    private static async Task<bool> WaitAsync(Task task, TimeSpan timeout, CancellationToken cancellationToken)
    {
        try
        {
            await task.WaitAsync(timeout, cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (TimeoutException)
        {
            return false;
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            return false;
        }
    }
}
