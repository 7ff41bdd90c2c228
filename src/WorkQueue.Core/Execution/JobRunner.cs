using System.Diagnostics;
using Microsoft.Extensions.Logging;
using WorkQueue.Accounting;
using WorkQueue.Durability;
using WorkQueue.Internal;
using WorkQueue.Scaling;
using WorkQueue.Telemetry;
using WorkQueue.Workers;

namespace WorkQueue.Execution;

/// <summary>
/// Runs one attempt of a job and decides how it ended: success, cancel, retry, dead letter, or cut short by the shutdown.
/// Where each outcome goes is the <see cref="IJobOutcomes"/> the queue was built with (in memory, or its
/// <see cref="IJobStore"/>), the same decisions for both kinds; the runner keeps the metrics, logs, traces and callbacks.
/// Each outcome is counted in the ledger before any logging, metrics or user callback, so that one of those throwing can
/// never leave a job unaccounted for.
/// </summary>
internal sealed partial class JobRunner : IJobExecutor
{
    private readonly string _queue;
    private readonly WorkQueueOptions _options;
    private readonly IServiceProvider _services;
    private readonly JobLedger _ledger;
    private readonly IJobOutcomes _outcomes;
    private readonly WorkQueueMetrics _metrics;
    private readonly KeyValuePair<string, object?> _metricTag;
    private readonly LatencyWindow _queueWait;
    private readonly LatencyWindow _runTime;
    private readonly TimeProvider _time;
    private readonly Func<double> _nextJitter;
    private readonly ILogger _logger;
    private readonly AbandonFlag _abandoning;
    private readonly AutoScaler _scaler;

    public JobRunner(
        string queue,
        WorkQueueOptions options,
        IServiceProvider services,
        JobLedger ledger,
        IJobOutcomes outcomes,
        WorkQueueMetrics metrics,
        LatencyWindow queueWait,
        LatencyWindow runTime,
        WorkQueueEnvironment environment,
        AbandonFlag abandoning,
        AutoScaler scaler,
        ILogger logger)
    {
        _queue = queue;
        _options = options;
        _services = services;
        _ledger = ledger;
        _outcomes = outcomes;
        _metrics = metrics;
        _metricTag = new KeyValuePair<string, object?>(WorkQueueMetrics.QueueTag, queue);
        _queueWait = queueWait;
        _runTime = runTime;
        _time = environment.Time;
        _nextJitter = environment.NextJitter;
        _abandoning = abandoning;
        _scaler = scaler;
        _logger = logger;
    }

    public bool OnStarting(in WorkItem item, long startTimestamp)
    {
        if (item.Tracked is { IsEnded: true })
        {
            // Cancelled while it waited (and counted then): it leaves the queue here, without running.
            return false;
        }

        if (_abandoning.IsSet)
        {
            // Taken just as the queue abandoned: reported abandoned, or (durable) back to its store as the rest of the prefetch.
            _outcomes.NotStarted(item);
            return false;
        }

        if (!_outcomes.TryStart(item))
        {
            if (item.Target is IRemoteCancellable { CanceledBeforeStart: true })
            {
                // Cancelled by id while it waited here: the store settles it as cancelled in Redis.
                _ledger.Canceled(item);
                _metrics.Canceled(_metricTag);
                return false;
            }

            // Another consumer of the durable queue has taken the job over: it runs there, not here.
            _ledger.Returned();
            return false;
        }

        if (item.Tracked is { } tracked && !tracked.TryStart(item.Attempt, WorkerThread.Current?.Name))
        {
            // A cancel won the race against this start: the job was counted as cancelled and must not run.
            return false;
        }

        var wait = _time.GetElapsedTime(item.EnqueuedTimestamp, startTimestamp);
        _queueWait.Record(wait);
        _ledger.Started();
        try
        {
            _metrics.JobStarted(_metricTag, wait);
            _scaler.OnJobStarted(wait);
        }
        catch (Exception ex)
        {
            // A throwing metrics listener or logger must not cost the job its run.
            _logger.TryLog(static (l, s) => Log.BookkeepingFailed(l, s.ex, s._queue), (ex, _queue));
        }

        return true;
    }

    public ValueTask Invoke(in WorkItem item, CancellationToken cancellationToken, out Activity? trace)
    {
        trace = WorkQueueTracing.StartJob(_queue, item);
        return item.Invoker.InvokeAsync(item.Target, item.State, _services, cancellationToken);
    }

    public void OnFinished(in WorkItem item, Exception? error, JobCancelReason cancelReason, TimeSpan elapsed, Activity? trace)
    {
        _runTime.Record(elapsed);
        bool cancelRequested = (item.Tracked is { CancelRequested: true } || item.Target is IRemoteCancellable { CancelRequested: true })
            && cancelReason != JobCancelReason.Shutdown;
        if (cancelRequested && error is OperationCanceledException)
        {
            // The job honoured the cancel: it ends cancelled, neither failed nor retried.
            _outcomes.Canceled(item);
            _metrics.Canceled(_metricTag);
            _metrics.JobCompleted(_metricTag, elapsed, "canceled");
            WorkQueueTracing.StopJob(trace, "canceled", error);
            _logger.TryLog(static (l, s) => Log.JobCanceled(l, s._queue, s.Id), (_queue, item.Id));
            return;
        }

        if (cancelRequested && item.Tracked is not null)
        {
            // A durable job's store logs it with the job's id in the store, as it records the outcome there.
            _logger.TryLog(
                static (l, s) => Log.CancelIgnored(l, s._queue, s.Id, s.Item3, s.Item4),
                (_queue, item.Id, item.Invoker.Describe(item.Target), error is null ? "it returned normally" : $"it threw {error.GetType().Name}, so it is dead-lettered without a retry"));
        }

        if (error is null)
        {
            _outcomes.Succeeded(item);
            _metrics.JobCompleted(_metricTag, elapsed, "success");
            WorkQueueTracing.StopJob(trace, "success", null);
            return;
        }

        if (cancelReason == JobCancelReason.Shutdown)
        {
            _outcomes.StoppedWhileRunning(item);
            _metrics.JobCompleted(_metricTag, elapsed, "canceled");
            WorkQueueTracing.StopJob(trace, "canceled", error);
            return;
        }

        if (cancelReason == JobCancelReason.Timeout && error is OperationCanceledException)
        {
            error = new TimeoutException($"The job ran longer than the JobTimeout of queue '{_queue}' ({_options.JobTimeout}).", error);
        }

        _ledger.AttemptFailed();

        if (!cancelRequested && item.Attempt < _options.Retry.MaxAttempts && _outcomes.CanRetry && ShouldRetry(error))
        {
            var delay = Backoff.Compute(_options.Retry, item.Attempt, _nextJitter);
            if (item.Tracked is { } tracked && !tracked.TryMarkRetrying(error.Message, _time.GetUtcNow() + delay))
            {
                // A cancel came as the attempt failed: no retry. Whichever of this and the cancel ends the job counts it.
                if (_ledger.CanceledBeforeStart(tracked))
                {
                    _metrics.Canceled(_metricTag);
                }

                _metrics.JobCompleted(_metricTag, elapsed, "canceled");
                WorkQueueTracing.StopJob(trace, "canceled", error);
                return;
            }

            _ledger.RetryScheduled();
            _outcomes.ScheduleRetry(item, delay, error);

            _metrics.Retried(_metricTag);
            _logger.TryLog(
                static (l, s) => Log.JobRetrying(l, s.error, s._queue, s.Id, s.Item4, s.Attempt, s.MaxAttempts, s.TotalMilliseconds),
                (error, _queue, item.Id, item.Invoker.Describe(item.Target), item.Attempt, _options.Retry.MaxAttempts, delay.TotalMilliseconds));
        }
        else
        {
            DeadLetter(item, error);
        }

        string outcome = error is TimeoutException ? "timeout" : "failure";
        _metrics.JobCompleted(_metricTag, elapsed, outcome);
        WorkQueueTracing.StopJob(trace, outcome, error);
    }

    /// <summary>Settles a job that <see cref="QueueFullMode.DropOldest"/> pushed out; called on the enqueuing thread.</summary>
    public void ReportDropped(WorkItem item)
    {
        if (!_ledger.Dropped(item))
        {
            // A cancelled job's leftover item made room: it was counted as cancelled, and nothing was lost.
            return;
        }

        var info = item.Describe(_queue);
        try
        {
            _metrics.Dropped(_metricTag);
            Log.JobDropped(_logger, _queue, info.Id, info.Name);
            _options.OnJobDropped?.Invoke(info);
        }
        catch (Exception ex)
        {
            // Nothing may escape into the caller's TryEnqueue, which has already succeeded.
            _logger.TryLog(static (l, s) => Log.CallbackFailed(l, s.ex, s._queue, nameof(WorkQueueOptions.OnJobDropped)), (ex, _queue));
        }
    }

    private bool ShouldRetry(Exception error)
    {
        if (_options.Retry.ShouldRetry is not { } predicate)
        {
            return true;
        }

        try
        {
            return predicate(error);
        }
        catch (Exception ex)
        {
            _logger.TryLog(static (l, s) => Log.CallbackFailed(l, s.ex, s._queue, nameof(RetryOptions.ShouldRetry)), (ex, _queue));
            return false;
        }
    }

    private void DeadLetter(in WorkItem item, Exception error)
    {
        var job = new DeadLetteredJob(item.Describe(_queue), error, _time.GetUtcNow());
        item.Tracked?.SetError(error.Message);
        _outcomes.DeadLettered(item, job, error);
        try
        {
            _metrics.DeadLettered(_metricTag);
            Log.JobDeadLettered(_logger, error, _queue, job.Job.Id, job.Job.Name, item.Attempt);
        }
        catch (Exception)
        {
            // A throwing metrics listener or logger: the job is already counted and stored.
        }
        if (_options.OnJobDeadLettered is { } callback)
        {
            try
            {
                callback(job);
            }
            catch (Exception ex)
            {
                _logger.TryLog(static (l, s) => Log.CallbackFailed(l, s.ex, s._queue, nameof(WorkQueueOptions.OnJobDeadLettered)), (ex, _queue));
            }
        }
    }

    private static partial class Log
    {
        [LoggerMessage(101, LogLevel.Warning, "Queue '{Queue}': job {JobId} ({Job}) failed on attempt {Attempt} of {MaxAttempts}; retrying in {DelayMs:F0} ms.", EventName = "JobRetrying")]
        public static partial void JobRetrying(ILogger logger, Exception exception, string queue, long jobId, string job, int attempt, int maxAttempts, double delayMs);

        [LoggerMessage(102, LogLevel.Error, "Queue '{Queue}': job {JobId} ({Job}) failed on attempt {Attempt} and was dead-lettered.", EventName = "JobDeadLettered")]
        public static partial void JobDeadLettered(ILogger logger, Exception exception, string queue, string jobId, string job, int attempt);

        [LoggerMessage(103, LogLevel.Warning, "Queue '{Queue}': job {JobId} ({Job}) was dropped to make room (DropOldest).", EventName = "JobDropped")]
        public static partial void JobDropped(ILogger logger, string queue, string jobId, string job);

        [LoggerMessage(105, LogLevel.Error, "Queue '{Queue}': the {Callback} callback threw; ignored.", EventName = "CallbackFailed")]
        public static partial void CallbackFailed(ILogger logger, Exception exception, string queue, string callback);

        [LoggerMessage(114, LogLevel.Information, "Queue '{Queue}': job {JobId} honoured its cancel and ended cancelled.", EventName = "JobCanceled")]
        public static partial void JobCanceled(ILogger logger, string queue, long jobId);

        [LoggerMessage(115, LogLevel.Warning, "Queue '{Queue}': job {JobId} ({Job}) was asked to cancel but ignored its token: {Outcome}.", EventName = "JobCancelIgnored")]
        public static partial void CancelIgnored(ILogger logger, string queue, long jobId, string job, string outcome);

        [LoggerMessage(111, LogLevel.Error, "Queue '{Queue}': bookkeeping as a job started failed (a logger or metrics listener threw); the job runs.", EventName = "StartBookkeepingFailed")]
        public static partial void BookkeepingFailed(ILogger logger, Exception exception, string queue);
    }
}
