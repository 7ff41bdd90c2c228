using System.Collections.Concurrent;
using System.Diagnostics.Metrics;

namespace WorkQueue.Telemetry;

/// <summary>
/// The <c>WorkQueue</c> meter's instruments. One instance per service provider; every queue reports through it with a
/// <c>workqueue.queue</c> tag.
/// </summary>
internal sealed class WorkQueueMetrics
{
    public const string MeterName = WorkQueueTelemetry.MeterName;

    public const string QueueTag = "workqueue.queue";
    public const string OutcomeTag = "workqueue.job.outcome";
    public const string ReasonTag = "workqueue.rejection.reason";
    public const string DetectionTag = "workqueue.detection";
    public const string HandlerTag = "workqueue.job.handler";

    /// <summary>A continuation arrived from another thread while its job's own thread was still running it synchronously.</summary>
    public const string SyncPartDetection = "sync_part";

    /// <summary>Every thread was busy in job code while continuations waited, so a thread was added.</summary>
    public const string BlockedThreadsDetection = "blocked_threads";

    private readonly Meter _meter;
    private readonly ConcurrentDictionary<string, IQueueGaugeSource> _queues = new();
    private readonly Counter<long> _enqueued;
    private readonly Counter<long> _rejected;
    private readonly Counter<long> _dropped;
    private readonly Counter<long> _canceled;
    private readonly Counter<long> _deduplicated;
    private readonly Counter<long> _scopeDisposalFailed;
    private readonly Histogram<double> _threadPoolLag;
    private Diagnostics.ThreadPoolCanary? _canary;
    private readonly Counter<long> _retried;
    private readonly Counter<long> _deadLettered;
    private readonly Counter<long> _syncOverAsync;
    private readonly Counter<long> _stuck;
    private readonly Histogram<double> _duration;
    private readonly Histogram<double> _queueWait;

    public WorkQueueMetrics(IMeterFactory meterFactory)
    {
        _meter = meterFactory.Create(MeterName);
        _enqueued = _meter.CreateCounter<long>("workqueue.job.enqueued", "{job}", "Jobs accepted by a queue.");
        _rejected = _meter.CreateCounter<long>("workqueue.job.rejected", "{job}", "Jobs a queue did not accept.");
        _dropped = _meter.CreateCounter<long>("workqueue.job.dropped", "{job}", "Accepted jobs dropped to make room (DropOldest).");
        _canceled = _meter.CreateCounter<long>("workqueue.job.canceled", "{job}", "Scheduled jobs cancelled before they came due.");
        _threadPoolLag = _meter.CreateHistogram<double>(
            "workqueue.threadpool.queue_lag",
            "s",
            "How long the thread-pool canary waited for a CLR thread-pool thread (the starvation alarm).",
            advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30] });
        _meter.CreateObservableGauge("workqueue.threadpool.lag", () => _canary?.LagSeconds ?? 0, "s", "How long the latest thread-pool canary waited, or has waited so far.");
        _scopeDisposalFailed = _meter.CreateCounter<long>("workqueue.job.scope_disposal_failed", "{job}", "Jobs whose service scope threw while disposed after the handler ended (the job's outcome is the handler's).");
        _deduplicated = _meter.CreateCounter<long>("workqueue.job.deduplicated", "{job}", "Enqueues that added no job because a job with the same idempotency key was unfinished.");
        _retried = _meter.CreateCounter<long>("workqueue.job.retried", "{job}", "Failed attempts scheduled to run again.");
        _deadLettered = _meter.CreateCounter<long>("workqueue.job.dead_lettered", "{job}", "Jobs that failed their last attempt.");
        _syncOverAsync = _meter.CreateCounter<long>("workqueue.job.sync_over_async", "{event}", "Signs of jobs blocking their thread on async code (sync-over-async), by how they were detected.");
        _stuck = _meter.CreateCounter<long>("workqueue.job.stuck", "{job}", "Running jobs reported as stuck.");
        _duration = _meter.CreateHistogram<double>(
            "workqueue.job.duration",
            "s",
            "How long one job attempt ran.",
            advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] });
        _queueWait = _meter.CreateHistogram<double>(
            "workqueue.job.queue_wait",
            "s",
            "How long a job waited between enqueue and start.",
            advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30] });
        _meter.CreateObservableGauge("workqueue.queue.depth", () => Observe(static q => q.Depth), "{job}", "Jobs waiting to start.");
        _meter.CreateObservableGauge("workqueue.queue.scheduled", () => Observe(static q => q.Scheduled), "{job}", "Scheduled jobs waiting for their time.");
        _meter.CreateObservableGauge("workqueue.queue.capacity", () => Observe(static q => q.Capacity), "{job}", "The most jobs a queue holds.");
        _meter.CreateObservableGauge("workqueue.workers.current", () => Observe(static q => q.CurrentWorkers), "{worker}", "Worker threads alive.");
        _meter.CreateObservableGauge("workqueue.workers.busy", () => Observe(static q => q.BusyWorkers), "{worker}", "Worker threads executing job code.");
        _meter.CreateObservableGauge("workqueue.jobs.running", () => Observe(static q => q.RunningJobs), "{job}", "Jobs started and not yet ended, async jobs that hold no thread included.");
        _meter.CreateObservableGauge("workqueue.continuations.waiting", () => Observe(static q => q.WaitingContinuations), "{continuation}", "Continuations of running async jobs waiting for a thread.");
    }

    public void Register(IQueueGaugeSource queue) => _queues[queue.Name] = queue;

    public void Unregister(IQueueGaugeSource queue) => _queues.TryRemove(queue.Name, out _);

    public void Enqueued(in KeyValuePair<string, object?> queueTag)
    {
        if (_enqueued.Enabled)
        {
            _enqueued.Add(1, queueTag);
        }
    }

    public void Rejected(in KeyValuePair<string, object?> queueTag, string reason)
    {
        if (_rejected.Enabled)
        {
            _rejected.Add(1, queueTag, new KeyValuePair<string, object?>(ReasonTag, reason));
        }
    }

    public void Dropped(in KeyValuePair<string, object?> queueTag)
    {
        if (_dropped.Enabled)
        {
            _dropped.Add(1, queueTag);
        }
    }

    public void Canceled(in KeyValuePair<string, object?> queueTag)
    {
        if (_canceled.Enabled)
        {
            _canceled.Add(1, queueTag);
        }
    }

    public void RegisterCanary(Diagnostics.ThreadPoolCanary canary) => _canary = canary;

    public void ThreadPoolLag(TimeSpan lag)
    {
        if (_threadPoolLag.Enabled)
        {
            _threadPoolLag.Record(lag.TotalSeconds);
        }
    }

    public void ScopeDisposalFailed(string handler)
    {
        if (_scopeDisposalFailed.Enabled)
        {
            _scopeDisposalFailed.Add(1, new KeyValuePair<string, object?>(HandlerTag, handler));
        }
    }

    public void Deduplicated(in KeyValuePair<string, object?> queueTag)
    {
        if (_deduplicated.Enabled)
        {
            _deduplicated.Add(1, queueTag);
        }
    }

    public void Retried(in KeyValuePair<string, object?> queueTag)
    {
        if (_retried.Enabled)
        {
            _retried.Add(1, queueTag);
        }
    }

    public void DeadLettered(in KeyValuePair<string, object?> queueTag)
    {
        if (_deadLettered.Enabled)
        {
            _deadLettered.Add(1, queueTag);
        }
    }

    public void SyncOverAsync(in KeyValuePair<string, object?> queueTag, string detection)
    {
        if (_syncOverAsync.Enabled)
        {
            _syncOverAsync.Add(1, queueTag, new KeyValuePair<string, object?>(DetectionTag, detection));
        }
    }

    public void Stuck(in KeyValuePair<string, object?> queueTag)
    {
        if (_stuck.Enabled)
        {
            _stuck.Add(1, queueTag);
        }
    }

    public void JobStarted(in KeyValuePair<string, object?> queueTag, TimeSpan queueWait)
    {
        if (_queueWait.Enabled)
        {
            _queueWait.Record(queueWait.TotalSeconds, queueTag);
        }
    }

    public void JobCompleted(in KeyValuePair<string, object?> queueTag, TimeSpan duration, string outcome)
    {
        if (_duration.Enabled)
        {
            _duration.Record(duration.TotalSeconds, queueTag, new KeyValuePair<string, object?>(OutcomeTag, outcome));
        }
    }

    private IEnumerable<Measurement<int>> Observe(Func<IQueueGaugeSource, int> read)
    {
        foreach (var queue in _queues.Values)
        {
            yield return new Measurement<int>(read(queue), queue.MetricTag);
        }
    }
}
