using Microsoft.Extensions.Logging;
using WorkQueue.Accounting;
using WorkQueue.Internal;

namespace WorkQueue.Queueing;

/// <summary>The steps a <see cref="ShutdownGroup"/> takes on each of its queues.</summary>
internal sealed partial class QueueRuntime
{
    /// <summary>Gets or sets the queue's stop, once one has begun (guarded by the provider's stop lock).</summary>
    public Task<ShutdownReport>? StopTask { get; set; }

    /// <summary>Refuses work from outside jobs from now on, and reports every ending to <paramref name="group"/>.</summary>
    public void BeginDraining(IDrainListener group)
    {
        _admission.BeginDraining();
        Ledger.Attach(group);
        TryLog(() => Log.Stopping(_logger, Name, Depth, Pool.RunningJobs));

        // A durable queue hands its unstarted jobs back to the store now, so another instance can take them at once.
        CloseIntake();

        // Scheduled jobs that have not come due are reported now: the stop does not wait for their time.
        foreach (var entry in _scheduled.Close())
        {
            _abandoned.Report(entry.Item, AbandonReason.NotDue);
        }

        // A paused queue could never drain: stopping resumes it, so queued jobs get their chance before the deadline.
        Pool.Resume();
    }

    /// <summary>Nothing is unfinished in the group: the channel completes and the threads exit once idle.</summary>
    public void CloseDrained()
    {
        _admission.Close();
        _channel.Writer.TryComplete();
        Pool.Close();
    }

    /// <summary>The deadline passed: report what is queued or waiting to retry, cancel what runs.</summary>
    public void Abandon()
    {
        _admission.Close();
        Pool.BeginAbandon();

        // Completing the writer fails any enqueue still waiting for space (it is counted as rejected).
        _channel.Writer.TryComplete();
        _retries.AbandonAll();
        try
        {
            foreach (var item in Pool.TakeQueuedDue())
            {
                _abandoned.Report(item, DueReason(item));
            }

            if (Store is not null)
            {
                ReturnPrefetched();
            }

            while (_channel.Reader.TryRead(out var item))
            {
                _abandoned.Report(item, AbandonReason.NotStarted);
            }
        }
        finally
        {
            Pool.CancelRunningJobs();
            Pool.Close();
        }
    }

    /// <summary>The grace period passed too: whatever still runs is reported as still running.</summary>
    public void ReportStillRunning()
    {
        foreach (var item in Pool.ClaimStillRunning())
        {
            _abandoned.Report(item, AbandonReason.StillRunning);
        }
    }

    public async Task<ShutdownReport> FinishStopAsync(bool groupDrained, TimeSpan elapsed)
    {
        _scaler.Stop();

        // A retry that came due just as the queue abandoned may have reached the pool after the abandon took the
        // pool's retries; no thread will start it now, so it is reported here rather than left unfinished.
        if (Pool.IsAbandoning)
        {
            foreach (var item in Pool.TakeQueuedDue())
            {
                _abandoned.Report(item, DueReason(item));
            }
        }

        // Threads exit once the pool is closed and idle; one stuck in a job that ignores its token is left behind (it
        // is a background thread, and its job was reported).
        await WaitAsync(Pool.AllExited, Options.ShutdownGracePeriod, _time, CancellationToken.None).ConfigureAwait(false);
        Pool.Shut();
        if (Store is not null)
        {
            // Outcomes of the jobs that ended are sent before the queue reports that it stopped.
            await Store.StopAsync(Options.ShutdownGracePeriod).ConfigureAwait(false);
        }

        _metrics.Unregister(this);

        var abandoned = Ledger.AbandonedJobs;
        var report = new ShutdownReport(Name, groupDrained || abandoned.Count == 0, abandoned, elapsed);
        TryLog(() =>
        {
            if (report.Abandoned.Count == 0)
            {
                Log.Drained(_logger, Name, elapsed.TotalMilliseconds);
            }
            else
            {
                Log.StoppedWithAbandoned(_logger, Name, report.Abandoned.Count, elapsed.TotalMilliseconds);
            }
        });

        return report;
    }

    /// <summary>A due job that never started: a retry waited for its next attempt; a scheduled job never started at all.</summary>
    private static AbandonReason DueReason(in WorkItem item) =>
        item.Attempt > 1 ? AbandonReason.RetryPending : AbandonReason.NotStarted;

    internal static async Task<bool> WaitAsync(Task task, TimeSpan timeout, TimeProvider time, CancellationToken cancellationToken)
    {
        try
        {
            await task.WaitAsync(timeout, time, cancellationToken).ConfigureAwait(false);
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

    /// <summary>Logs on a path that must not fail (shutdown): a logger that throws is ignored.</summary>
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

    private static partial class Log
    {
        [LoggerMessage(100, LogLevel.Information, "Queue '{Queue}' started: capacity {Capacity}, {Min}-{Max} threads, concurrency {Concurrency}, full mode {FullMode}.", EventName = "QueueStarted")]
        public static partial void Started(ILogger logger, string queue, int capacity, int min, int max, string concurrency, QueueFullMode fullMode);

        [LoggerMessage(106, LogLevel.Information, "Queue '{Queue}' stopping: {Depth} queued, {Running} running; work from running jobs is still accepted.", EventName = "QueueStopping")]
        public static partial void Stopping(ILogger logger, string queue, int depth, int running);

        [LoggerMessage(107, LogLevel.Information, "Queue '{Queue}' drained and stopped in {ElapsedMs:F0} ms.", EventName = "QueueDrained")]
        public static partial void Drained(ILogger logger, string queue, double elapsedMs);

        [LoggerMessage(108, LogLevel.Warning, "Queue '{Queue}' stopped after {ElapsedMs:F0} ms with {Count} job(s) not completed; see the shutdown report.", EventName = "QueueStoppedWithAbandoned")]
        public static partial void StoppedWithAbandoned(ILogger logger, string queue, int count, double elapsedMs);

        [LoggerMessage(109, LogLevel.Information, "Queue '{Queue}' paused.", EventName = "QueuePaused")]
        public static partial void Paused(ILogger logger, string queue);

        [LoggerMessage(110, LogLevel.Information, "Queue '{Queue}' resumed.", EventName = "QueueResumed")]
        public static partial void Resumed(ILogger logger, string queue);
    }
}
