using System.Diagnostics;
using System.Threading.Channels;
using WorkQueue.Internal;
using WorkQueue.Workers;

namespace WorkQueue.Queueing;

internal sealed partial class DefaultWorkQueue
{
    /// <summary>Runs one attempt of a job on <paramref name="worker"/>'s thread and settles its outcome.</summary>
    internal void Execute(in WorkItem item, Worker worker)
    {
        long start = Stopwatch.GetTimestamp();
        if (_abandoning)
        {
            ReportAbandoned(item, AbandonReason.NotStarted);
            return;
        }

        var wait = Stopwatch.GetElapsedTime(item.EnqueuedTimestamp, start);
        _queueWait.Record(wait);
        Interlocked.Increment(ref _started);
        try
        {
            _metrics.JobStarted(_metricTag, wait);
            _scaler.OnJobStarted(wait);
        }
        catch (Exception ex)
        {
            // A throwing metrics listener or logger must not cost the job its run.
            _pool.OnBookkeepingFailed(worker, ex);
        }

        Exception? error = null;
        var token = worker.BeginJob(item, _options.JobTimeout);
        try
        {
            var job = item.Invoker.InvokeAsync(item.Target, item.State, _services, token);
            worker.Context.RunUntilCompleted(job);
            job.GetAwaiter().GetResult();
        }
        catch (Exception ex)
        {
            error = ex;
        }

        var elapsed = Stopwatch.GetElapsedTime(start);
        var cancelReason = worker.CancelReason;
        if (cancelReason == JobCancelReason.None && token.IsCancellationRequested)
        {
            // Only a timeout cancels a job's token other than through CancelForShutdown (which marks the reason first).
            cancelReason = JobCancelReason.Timeout;
        }

        if (!worker.EndJob())
        {
            // The shutdown gave up on this job and already reported it as still running.
            return;
        }

        _runTime.Record(elapsed);
        // From here on, each outcome is counted (and the drain checked) before any logging, metrics or user callback,
        // so that one of those throwing can never leave a job unaccounted for.
        if (error is null)
        {
            Interlocked.Increment(ref _succeeded);
            CheckDrained();
            _metrics.JobCompleted(_metricTag, elapsed, "success");
            return;
        }

        if (cancelReason == JobCancelReason.Shutdown)
        {
            ReportAbandoned(item, AbandonReason.Canceled);
            _metrics.JobCompleted(_metricTag, elapsed, "canceled");
            return;
        }

        if (cancelReason == JobCancelReason.Timeout && error is OperationCanceledException)
        {
            error = new TimeoutException($"The job ran longer than the JobTimeout of queue '{Name}' ({_options.JobTimeout}).", error);
        }

        Interlocked.Increment(ref _failed);
        if (item.Attempt < _options.Retry.MaxAttempts && !_abandoning && ShouldRetry(error))
        {
            ScheduleRetry(item, error);
        }
        else
        {
            DeadLetter(item, error);
        }

        _metrics.JobCompleted(_metricTag, elapsed, error is TimeoutException ? "timeout" : "failure");
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
            Log.CallbackFailed(_logger, ex, Name, nameof(RetryOptions.ShouldRetry));
            return false;
        }
    }

    private void ScheduleRetry(in WorkItem item, Exception error)
    {
        Interlocked.Increment(ref _retried);
        var delay = Backoff.Compute(_options.Retry, item.Attempt);
        _pendingRetries[item.Id] = item;
        _ = RetryLaterAsync(item, delay);
        _metrics.Retried(_metricTag);
        Log.JobRetrying(_logger, error, Name, item.Id, item.Invoker.Describe(item.Target), item.Attempt, _options.Retry.MaxAttempts, delay.TotalMilliseconds);
    }

    private async Task RetryLaterAsync(WorkItem item, TimeSpan delay)
    {
        try
        {
            await Task.Delay(delay, _abandonCts.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // The shutdown deadline passed; whoever removes the entry below (or the shutdown) reports the job.
        }

        if (!_pendingRetries.TryRemove(item.Id, out _))
        {
            return;
        }

        if (!_abandoning)
        {
            try
            {
                // Retries bypass the full mode: the job was already accepted, so it waits for space rather than being rejected.
                await _channel.Writer.WriteAsync(item.ForNextAttempt(Stopwatch.GetTimestamp()), _abandonCts.Token).ConfigureAwait(false);
                return;
            }
            catch (Exception ex) when (ex is OperationCanceledException or ChannelClosedException)
            {
                // Shutdown gave up while the retry waited for space.
            }
        }

        ReportAbandoned(item, AbandonReason.RetryPending);
    }

    private void DeadLetter(in WorkItem item, Exception error)
    {
        var job = new DeadLetteredJob(item.Describe(Name), error, DateTimeOffset.UtcNow);
        _deadLetters.Add(job);
        Interlocked.Increment(ref _deadLettered);
        CheckDrained();
        _metrics.DeadLettered(_metricTag);
        Log.JobDeadLettered(_logger, error, Name, job.Job.Id, job.Job.Name, item.Attempt);
        if (_options.OnJobDeadLettered is { } callback)
        {
            try
            {
                callback(job);
            }
            catch (Exception ex)
            {
                Log.CallbackFailed(_logger, ex, Name, nameof(WorkQueueOptions.OnJobDeadLettered));
            }
        }
    }

    private void ReportAbandoned(in WorkItem item, AbandonReason reason)
    {
        var job = new AbandonedJob(item.Describe(Name), reason);
        _abandonedJobs.Enqueue(job);
        Interlocked.Increment(ref _abandoned);
        CheckDrained();

        // The job is in the report; a failing logger must not stop the shutdown halfway.
        TryLog(() => Log.JobAbandoned(_logger, Name, job.Job.Id, job.Job.Name, reason));
    }
}
