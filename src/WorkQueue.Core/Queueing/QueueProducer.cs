using System.Diagnostics.CodeAnalysis;
using System.Threading.Channels;
using WorkQueue.Accounting;
using WorkQueue.Internal;
using WorkQueue.Scheduling;
using WorkQueue.Telemetry;
using WorkQueue.Tracking;

namespace WorkQueue.Queueing;

/// <summary>
/// The producer side of a queue: admits jobs, counts every attempt, and writes accepted ones to the channel. Its async
/// members complete synchronously: nothing in memory needs a wait but a full queue's.
/// </summary>
internal sealed class QueueProducer : IInMemoryWorkQueue
{
    private readonly ChannelWriter<WorkItem> _writer;
    private readonly JobLedger _ledger;
    private readonly Admission _admission;
    private readonly WorkQueueOptions _options;
    private readonly WorkQueueMetrics _metrics;
    private readonly KeyValuePair<string, object?> _metricTag;
    private readonly TimeProvider _time;
    // Called after each job written to the channel: it arms the queue's timers when they are idle.
    private readonly Action _workArrived;
    private readonly ScheduledJobSet _scheduled;
    private readonly JobTracker _tracker;
    private readonly IQueueJobs _jobs;

    public QueueProducer(string name, ChannelWriter<WorkItem> writer, JobLedger ledger, Admission admission, WorkQueueOptions options, WorkQueueMetrics metrics, TimeProvider time, Action workArrived, ScheduledJobSet scheduled, JobTracker tracker, IQueueJobs jobs)
    {
        _jobs = jobs;
        _scheduled = scheduled;
        _tracker = tracker;
        Name = name;
        _writer = writer;
        _ledger = ledger;
        _admission = admission;
        _options = options;
        _metrics = metrics;
        _metricTag = new KeyValuePair<string, object?>(WorkQueueMetrics.QueueTag, name);
        _time = time;
        _workArrived = workArrived;
    }

    public string Name { get; }

    public bool TryEnqueue(Action<CancellationToken> job)
    {
        ArgumentNullException.ThrowIfNull(job);
        return TryWrite(SyncDelegateInvoker.Instance, job, null);
    }

    public bool TryEnqueue(Func<CancellationToken, ValueTask> job)
    {
        ArgumentNullException.ThrowIfNull(job);
        return TryWrite(AsyncDelegateInvoker.Instance, job, null);
    }

    public bool TryEnqueue<TPayload>(IJobHandler<TPayload> handler, TPayload payload)
    {
        ArgumentNullException.ThrowIfNull(handler);
        return TryWrite(HandlerInvoker<TPayload>.Instance, handler, payload);
    }

    public bool TryEnqueue<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload)
        where THandler : class, IJobHandler<TPayload> =>
        TryWrite(ScopedHandlerInvoker<THandler, TPayload>.Instance, null, payload);

    public ValueTask EnqueueAsync(Action<CancellationToken> job, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(job);
        return WriteAsync(SyncDelegateInvoker.Instance, job, null, cancellationToken);
    }

    public ValueTask EnqueueAsync(Func<CancellationToken, ValueTask> job, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(job);
        return WriteAsync(AsyncDelegateInvoker.Instance, job, null, cancellationToken);
    }

    public ValueTask EnqueueAsync<TPayload>(IJobHandler<TPayload> handler, TPayload payload, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(handler);
        return WriteAsync(HandlerInvoker<TPayload>.Instance, handler, payload, cancellationToken);
    }

    public ValueTask EnqueueAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload> =>
        WriteAsync(ScopedHandlerInvoker<THandler, TPayload>.Instance, null, payload, cancellationToken);

    public ValueTask<EnqueueResult> EnqueueAsync<TPayload>(IJobHandler<TPayload> handler, TPayload payload, JobOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(handler);
        ArgumentNullException.ThrowIfNull(options);
        return Enqueue(HandlerInvoker<TPayload>.Instance, handler, payload, options, cancellationToken);
    }

    public ValueTask<EnqueueResult> EnqueueAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, JobOptions options, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload>
    {
        ArgumentNullException.ThrowIfNull(options);
        return Enqueue(ScopedHandlerInvoker<THandler, TPayload>.Instance, null, payload, options, cancellationToken);
    }

    public string Schedule(Action<CancellationToken> job, TimeSpan delay)
    {
        ArgumentNullException.ThrowIfNull(job);
        return JobIds.Format(Schedule(SyncDelegateInvoker.Instance, job, null, DueAfter(delay)));
    }

    public string Schedule(Action<CancellationToken> job, DateTimeOffset runAt)
    {
        ArgumentNullException.ThrowIfNull(job);
        return JobIds.Format(Schedule(SyncDelegateInvoker.Instance, job, null, runAt));
    }

    public string Schedule(Func<CancellationToken, ValueTask> job, TimeSpan delay)
    {
        ArgumentNullException.ThrowIfNull(job);
        return JobIds.Format(Schedule(AsyncDelegateInvoker.Instance, job, null, DueAfter(delay)));
    }

    public string Schedule(Func<CancellationToken, ValueTask> job, DateTimeOffset runAt)
    {
        ArgumentNullException.ThrowIfNull(job);
        return JobIds.Format(Schedule(AsyncDelegateInvoker.Instance, job, null, runAt));
    }

    public string Schedule<TPayload>(IJobHandler<TPayload> handler, TPayload payload, TimeSpan delay)
    {
        ArgumentNullException.ThrowIfNull(handler);
        return JobIds.Format(Schedule(HandlerInvoker<TPayload>.Instance, handler, payload, DueAfter(delay)));
    }

    public string Schedule<TPayload>(IJobHandler<TPayload> handler, TPayload payload, DateTimeOffset runAt)
    {
        ArgumentNullException.ThrowIfNull(handler);
        return JobIds.Format(Schedule(HandlerInvoker<TPayload>.Instance, handler, payload, runAt));
    }

    public string Schedule<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, TimeSpan delay)
        where THandler : class, IJobHandler<TPayload> =>
        JobIds.Format(Schedule(ScopedHandlerInvoker<THandler, TPayload>.Instance, null, payload, DueAfter(delay)));

    public string Schedule<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, DateTimeOffset runAt)
        where THandler : class, IJobHandler<TPayload> =>
        JobIds.Format(Schedule(ScopedHandlerInvoker<THandler, TPayload>.Instance, null, payload, runAt));

    public bool CancelScheduled(string jobId)
    {
        ArgumentNullException.ThrowIfNull(jobId);
        return JobIds.TryParse(jobId, out long id) && CancelScheduled(id);
    }

    public ValueTask<string> ScheduleAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, TimeSpan delay, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload>
    {
        // Worked out first: a delay out of range is the caller's mistake, thrown here as the sync Schedule throws it.
        var runAt = DueAfter(delay);
        return ScheduleAsync(ScopedHandlerInvoker<THandler, TPayload>.Instance, payload, runAt);
    }

    public ValueTask<string> ScheduleAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, DateTimeOffset runAt, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload> =>
        ScheduleAsync(ScopedHandlerInvoker<THandler, TPayload>.Instance, payload, runAt);

    public ValueTask<bool> CancelScheduledAsync(string jobId, CancellationToken cancellationToken = default) =>
        new(CancelScheduled(jobId));

    public ValueTask<JobStatus?> GetJobAsync(string jobId, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(jobId);
        return new(_jobs.GetJob(jobId));
    }

    public ValueTask<JobCancelResult> CancelAsync(string jobId, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(jobId);
        return new(_jobs.Cancel(jobId));
    }

    public ValueTask<JobPage> FindJobsAsync(JobQuery query, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(query);
        query.Validate(nameof(query));
        return new(_jobs.FindJobs(query));
    }

    /// <summary>Schedules a typed-handler job; a refusal is the task's exception, as <c>EnqueueAsync</c> reports one.</summary>
    private ValueTask<string> ScheduleAsync(JobInvoker invoker, object? state, DateTimeOffset runAt)
    {
        try
        {
            return new(JobIds.Format(Schedule(invoker, null, state, runAt)));
        }
        catch (JobRejectedException ex)
        {
            return ValueTask.FromException<string>(ex);
        }
    }

    private bool CancelScheduled(long jobId)
    {
        // Whoever takes the entry out of the set owns it; the ledger still counts it only if a cancel by id
        // (IWorkQueue.CancelAsync) did not end it first.
        if (_scheduled.TryCancel(jobId) is not { } entry || !_ledger.Canceled(entry.Item))
        {
            return false;
        }

        _metrics.Canceled(_metricTag);
        return true;
    }

    private DateTimeOffset DueAfter(TimeSpan delay)
    {
        var now = _time.GetUtcNow();
        if (delay <= TimeSpan.Zero)
        {
            return now;
        }

        return delay <= DateTimeOffset.MaxValue - now
            ? now + delay
            : throw new ArgumentOutOfRangeException(nameof(delay), delay, $"The delay reaches past {DateTimeOffset.MaxValue:O}, the latest time the engine can represent; schedule with an absolute time instead.");
    }

    /// <summary>Schedules any kind of job (recurring jobs' occurrences come this way); see <see cref="IInMemoryWorkQueue.Schedule(Action{CancellationToken}, DateTimeOffset)"/>.</summary>
    internal long Schedule(JobInvoker invoker, object? target, object? state, DateTimeOffset runAt, string? key = null)
    {
        // Counted like any enqueue: accepted here, it ends exactly once (run, cancelled, or reported at a stop).
        long id = _ledger.Offer();
        Bind(key, id);
        if (!_admission.Allows())
        {
            throw Refuse(key, id, RejectionReason.QueueStopped);
        }

        // Tracked before it can come due: its id is handed out, so it can be looked up and cancelled.
        var tracked = _tracker.Track(id, invoker, target, key, runAt, state);
        var item = new WorkItem(invoker, target, state, id, _time.GetTimestamp(), attempt: 1, WorkQueueTracing.CaptureParent(), key, tracked);
        switch (_scheduled.TryAdd(item, runAt))
        {
            case ScheduleResult.Scheduled:
            case ScheduleResult.Due:
                _metrics.Enqueued(_metricTag);
                return id;
            case ScheduleResult.Full:
                throw Refuse(key, id, RejectionReason.QueueFull, $"Queue '{Name}' holds its MaxScheduledJobs ({_scheduled.MaxCount}) scheduled jobs.");
            default:
                throw Refuse(key, id, RejectionReason.QueueStopped);
        }
    }

    private ValueTask<EnqueueResult> Enqueue(JobInvoker invoker, object? target, object? state, JobOptions options, CancellationToken cancellationToken)
    {
        options.Validate(nameof(options));

        // The time is worked out before the key is reserved, so a delay that is out of range reserves nothing.
        DateTimeOffset? runAt = options.RunAt ?? (options.Delay is { } delay ? DueAfter(delay) : null);
        string? key = options.IdempotencyKey;
        if (key is not null && !_ledger.Keys!.TryReserve(key, out long holder))
        {
            _metrics.Deduplicated(_metricTag);
            return ValueTask.FromResult(new EnqueueResult(JobIds.Format(holder), Created: false));
        }

        if (runAt is { } at)
        {
            try
            {
                return ValueTask.FromResult(new EnqueueResult(JobIds.Format(Schedule(invoker, target, state, at, key)), Created: true));
            }
            catch (JobRejectedException ex)
            {
                // A refusal is the task's exception, as ScheduleAsync and an immediate enqueue report one (and a durable
                // queue can only answer so); Schedule has freed the key.
                return ValueTask.FromException<EnqueueResult>(ex);
            }
        }

        var write = WriteAsync(invoker, target, state, cancellationToken, out long id, key, track: true);
        return write.IsCompletedSuccessfully
            ? ValueTask.FromResult(new EnqueueResult(JobIds.Format(id), Created: true))
            : AwaitWriteAsync(write, id);

        static async ValueTask<EnqueueResult> AwaitWriteAsync(ValueTask write, long id)
        {
            await write.ConfigureAwait(false);
            return new EnqueueResult(JobIds.Format(id), Created: true);
        }
    }

    private void Bind(string? key, long id)
    {
        if (key is not null)
        {
            _ledger.Keys!.Bind(key, id);
        }
    }

    /// <summary>An enqueue that took an id was refused: its key (if any) is free again, it is not tracked, and the refusal is counted.</summary>
    private JobRejectedException Refuse(string? key, long id, RejectionReason reason, string? message = null)
    {
        _ledger.ReleaseRefused(key, id);
        _tracker.Forget(id);
        return Reject(reason, message);
    }

    private void Refuse(string? key, long id, string reason)
    {
        _ledger.ReleaseRefused(key, id);
        _tracker.Forget(id);
        Reject(reason);
    }

    private bool TryWrite(JobInvoker invoker, object? target, object? state)
    {
        // The id doubles as the attempt counter, so the fast path pays for one interlocked operation. It is taken before
        // the admission is read: a drain check either sees this attempt as unfinished or this read sees the queue closing.
        long id = _ledger.Offer();
        if (!_admission.IsOpen && !_admission.Allows())
        {
            Reject("queue_stopped");
            return false;
        }

        // A queue that tracks every job tracks this one before it can run (a thread may take it at once).
        var tracked = _options.TrackAllJobs ? _tracker.Track(id, invoker, target, key: null, runAt: null, state) : null;
        if (_writer.TryWrite(new WorkItem(invoker, target, state, id, _time.GetTimestamp(), attempt: 1, WorkQueueTracing.CaptureParent(), key: null, tracked)))
        {
            _metrics.Enqueued(_metricTag);
            _workArrived();
            return true;
        }

        Refuse(key: null, id, _admission.Allows() ? "queue_full" : "queue_stopped");
        return false;
    }

    private ValueTask WriteAsync(JobInvoker invoker, object? target, object? state, CancellationToken cancellationToken) =>
        WriteAsync(invoker, target, state, cancellationToken, out _, key: null, track: _options.TrackAllJobs);

    // track: the job's id is handed out (an enqueue with options), or the queue tracks every job.
    private ValueTask WriteAsync(JobInvoker invoker, object? target, object? state, CancellationToken cancellationToken, out long id, string? key, bool track)
    {
        // Every call is counted, so that Enqueued + Rejected always equals the calls made (a cancelled one included).
        id = _ledger.Offer();
        Bind(key, id);
        if (cancellationToken.IsCancellationRequested)
        {
            Refuse(key, id, "canceled");
            return ValueTask.FromCanceled(cancellationToken);
        }

        if (!_admission.Allows())
        {
            return ValueTask.FromException(Refuse(key, id, RejectionReason.QueueStopped));
        }

        var tracked = track ? _tracker.Track(id, invoker, target, key, runAt: null, state) : null;
        var item = new WorkItem(invoker, target, state, id, _time.GetTimestamp(), attempt: 1, WorkQueueTracing.CaptureParent(), key, tracked);
        if (_writer.TryWrite(item))
        {
            _metrics.Enqueued(_metricTag);
            _workArrived();
            return default;
        }

        if (!_admission.Allows())
        {
            return ValueTask.FromException(Refuse(key, id, RejectionReason.QueueStopped));
        }

        return _options.FullMode == QueueFullMode.Wait
            ? WaitForSpaceAsync(item, cancellationToken)
            : ValueTask.FromException(Refuse(key, id, RejectionReason.QueueFull));
    }

    private async ValueTask WaitForSpaceAsync(WorkItem item, CancellationToken cancellationToken)
    {
        var timeout = _options.EnqueueTimeout;

        // The channel gets a token that only this method cancels, and only once the channel's write has registered on
        // it. Given the caller's token, .NET 10's bounded channel can take the item of a write whose token is cancelled
        // while the write registers on it: the write ends as cancelled (so the caller hears "not taken" and the ledger
        // counts a rejection), yet the next read still moves its item into the channel, and the job runs
        // (dotnet/runtime#132094, fixed by dotnet/runtime#132230). The timeout runs on the engine's timer.
        using var waitCts = new CancellationTokenSource(Timeout.InfiniteTimeSpan, _time);
        var write = _writer.WriteAsync(item, waitCts.Token);
        var callerRegistration = default(CancellationTokenRegistration);
        if (!write.IsCompleted)
        {
            // A token already cancelled runs the callback here, after the write registered: that is the point.
            callerRegistration = cancellationToken.UnsafeRegister(static s => ((CancellationTokenSource)s!).Cancel(), waitCts);
            if (timeout != Timeout.InfiniteTimeSpan)
            {
                waitCts.CancelAfter(timeout);
            }
        }

        try
        {
            await write.ConfigureAwait(false);
            _metrics.Enqueued(_metricTag);
            _workArrived();
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            Refuse(item.Key, item.Id, "canceled");

            // Thrown for the caller's token, which is what cancelled the wait.
            throw new OperationCanceledException(cancellationToken);
        }
        catch (OperationCanceledException) when (waitCts.IsCancellationRequested)
        {
            throw Refuse(item.Key, item.Id, RejectionReason.QueueFull, $"Queue '{Name}' had no space for the job within its EnqueueTimeout ({timeout}).");
        }
        catch (ChannelClosedException)
        {
            throw Refuse(item.Key, item.Id, RejectionReason.QueueStopped);
        }
        catch (OperationCanceledException)
        {
            // No token says why; still one call, one rejection.
            Refuse(item.Key, item.Id, "canceled");
            throw;
        }
        finally
        {
            // Waits for a cancellation running on another thread, so the source is not disposed under it.
            callerRegistration.Dispose();
        }
    }

    private JobRejectedException Reject(RejectionReason reason, string? message = null)
    {
        Reject(reason == RejectionReason.QueueFull ? "queue_full" : "queue_stopped");
        return new JobRejectedException(
            Name,
            reason,
            message ?? (reason == RejectionReason.QueueStopped
                ? $"Queue '{Name}' is stopping and accepts no more jobs from outside a running job."
                : $"Queue '{Name}' is full ({_options.Capacity} jobs) and its FullMode is {_options.FullMode}."));
    }

    private void Reject(string reason)
    {
        _ledger.Rejected();
        _metrics.Rejected(_metricTag, reason);
    }
}
