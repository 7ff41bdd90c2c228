using System.Diagnostics.CodeAnalysis;

namespace WorkQueue.Testing.Internal;

/// <summary>
/// An in-memory queue's producer as the harness hands it out: the typed calls as <see cref="RecordingWorkQueue"/> does
/// them, and delegates, handler instances, <c>TryEnqueue</c> and <c>Schedule</c> recorded and handled the same way.
/// </summary>
internal sealed class RecordingInMemoryWorkQueue : IInMemoryWorkQueue
{
    private readonly IInMemoryWorkQueue _inner;
    private readonly RecordingWorkQueue _typed;

    public RecordingInMemoryWorkQueue(IInMemoryWorkQueue inner, WorkQueueTestHarness harness)
    {
        _inner = inner;
        _typed = new RecordingWorkQueue(inner, harness);
    }

    public string Name => _inner.Name;

    // IWorkQueue: as any queue.
    public ValueTask EnqueueAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload> => _typed.EnqueueAsync<THandler, TPayload>(payload, cancellationToken);

    public ValueTask<EnqueueResult> EnqueueAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, JobOptions options, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload> => _typed.EnqueueAsync<THandler, TPayload>(payload, options, cancellationToken);

    public ValueTask<string> ScheduleAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, TimeSpan delay, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload> => _typed.ScheduleAsync<THandler, TPayload>(payload, delay, cancellationToken);

    public ValueTask<string> ScheduleAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, DateTimeOffset runAt, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload> => _typed.ScheduleAsync<THandler, TPayload>(payload, runAt, cancellationToken);

    public ValueTask<bool> CancelScheduledAsync(string jobId, CancellationToken cancellationToken = default) => _typed.CancelScheduledAsync(jobId, cancellationToken);

    public ValueTask<JobStatus?> GetJobAsync(string jobId, CancellationToken cancellationToken = default) => _typed.GetJobAsync(jobId, cancellationToken);

    public ValueTask<JobCancelResult> CancelAsync(string jobId, CancellationToken cancellationToken = default) => _typed.CancelAsync(jobId, cancellationToken);

    public ValueTask<JobPage> FindJobsAsync(JobQuery query, CancellationToken cancellationToken = default) => _typed.FindJobsAsync(query, cancellationToken);

    // TryEnqueue: refused (false) is recorded as not created.
    public bool TryEnqueue(Action<CancellationToken> job)
    {
        ArgumentNullException.ThrowIfNull(job);
        return _typed.Submit(null, job, null, null, () => (null, _inner.TryEnqueue(job)), Run(job)).Created;
    }

    public bool TryEnqueue(Func<CancellationToken, ValueTask> job)
    {
        ArgumentNullException.ThrowIfNull(job);
        return _typed.Submit(null, job, null, null, () => (null, _inner.TryEnqueue(job)), Run(job)).Created;
    }

    public bool TryEnqueue<TPayload>(IJobHandler<TPayload> handler, TPayload payload)
    {
        ArgumentNullException.ThrowIfNull(handler);
        return _typed.Submit(handler.GetType(), payload, null, null, () => (null, _inner.TryEnqueue(handler, payload)), Run(handler, payload)).Created;
    }

    public bool TryEnqueue<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload)
        where THandler : class, IJobHandler<TPayload> =>
        _typed.Submit(typeof(THandler), payload, null, null, () => (null, _inner.TryEnqueue<THandler, TPayload>(payload)), RecordingWorkQueue.Handler<THandler, TPayload>(payload)).Created;

    // EnqueueAsync of delegates and handler instances.
    public async ValueTask EnqueueAsync(Action<CancellationToken> job, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(job);
        await _typed.SubmitAsync(null, job, null, null, null, Sent(() => _inner.EnqueueAsync(job, cancellationToken)), Run(job), cancellationToken).ConfigureAwait(false);
    }

    public async ValueTask EnqueueAsync(Func<CancellationToken, ValueTask> job, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(job);
        await _typed.SubmitAsync(null, job, null, null, null, Sent(() => _inner.EnqueueAsync(job, cancellationToken)), Run(job), cancellationToken).ConfigureAwait(false);
    }

    public async ValueTask EnqueueAsync<TPayload>(IJobHandler<TPayload> handler, TPayload payload, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(handler);
        await _typed.SubmitAsync(handler.GetType(), payload, null, null, null, Sent(() => _inner.EnqueueAsync(handler, payload, cancellationToken)), Run(handler, payload), cancellationToken).ConfigureAwait(false);
    }

    public ValueTask<EnqueueResult> EnqueueAsync<TPayload>(IJobHandler<TPayload> handler, TPayload payload, JobOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(handler);
        RecordingWorkQueue.Check(options);
        return _typed.SubmitAsync(
            handler.GetType(), payload, options, null, null,
            async () =>
            {
                var result = await _inner.EnqueueAsync(handler, payload, options, cancellationToken).ConfigureAwait(false);
                return (result.JobId, result.Created);
            },
            Run(handler, payload),
            cancellationToken);
    }

    // Schedule: synchronous, as the in-memory queue's own.
    public string Schedule(Action<CancellationToken> job, TimeSpan delay)
    {
        ArgumentNullException.ThrowIfNull(job);
        return _typed.Submit(null, job, delay, null, () => (_inner.Schedule(job, delay), true), Run(job)).JobId!;
    }

    public string Schedule(Action<CancellationToken> job, DateTimeOffset runAt)
    {
        ArgumentNullException.ThrowIfNull(job);
        return _typed.Submit(null, job, null, runAt, () => (_inner.Schedule(job, runAt), true), Run(job)).JobId!;
    }

    public string Schedule(Func<CancellationToken, ValueTask> job, TimeSpan delay)
    {
        ArgumentNullException.ThrowIfNull(job);
        return _typed.Submit(null, job, delay, null, () => (_inner.Schedule(job, delay), true), Run(job)).JobId!;
    }

    public string Schedule(Func<CancellationToken, ValueTask> job, DateTimeOffset runAt)
    {
        ArgumentNullException.ThrowIfNull(job);
        return _typed.Submit(null, job, null, runAt, () => (_inner.Schedule(job, runAt), true), Run(job)).JobId!;
    }

    public string Schedule<TPayload>(IJobHandler<TPayload> handler, TPayload payload, TimeSpan delay)
    {
        ArgumentNullException.ThrowIfNull(handler);
        return _typed.Submit(handler.GetType(), payload, delay, null, () => (_inner.Schedule(handler, payload, delay), true), Run(handler, payload)).JobId!;
    }

    public string Schedule<TPayload>(IJobHandler<TPayload> handler, TPayload payload, DateTimeOffset runAt)
    {
        ArgumentNullException.ThrowIfNull(handler);
        return _typed.Submit(handler.GetType(), payload, null, runAt, () => (_inner.Schedule(handler, payload, runAt), true), Run(handler, payload)).JobId!;
    }

    public string Schedule<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, TimeSpan delay)
        where THandler : class, IJobHandler<TPayload> =>
        _typed.Submit(typeof(THandler), payload, delay, null, () => (_inner.Schedule<THandler, TPayload>(payload, delay), true), RecordingWorkQueue.Handler<THandler, TPayload>(payload)).JobId!;

    public string Schedule<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, DateTimeOffset runAt)
        where THandler : class, IJobHandler<TPayload> =>
        _typed.Submit(typeof(THandler), payload, null, runAt, () => (_inner.Schedule<THandler, TPayload>(payload, runAt), true), RecordingWorkQueue.Handler<THandler, TPayload>(payload)).JobId!;

    public bool CancelScheduled(string jobId)
    {
        ArgumentNullException.ThrowIfNull(jobId);
        return _typed.CancelScheduledAsync(jobId).AsTask().GetAwaiter().GetResult();
    }

    private static Func<ValueTask<(string? JobId, bool Created)>> Sent(Func<ValueTask> send) => async () =>
    {
        await send().ConfigureAwait(false);
        return (null, true);
    };

    private static Func<IServiceProvider, CancellationToken, ValueTask> Run(Action<CancellationToken> job) => (_, cancellationToken) =>
    {
        job(cancellationToken);
        return default;
    };

    private static Func<IServiceProvider, CancellationToken, ValueTask> Run(Func<CancellationToken, ValueTask> job) => (_, cancellationToken) => job(cancellationToken);

    private static Func<IServiceProvider, CancellationToken, ValueTask> Run<TPayload>(IJobHandler<TPayload> handler, TPayload payload) =>
        (_, cancellationToken) => handler.ExecuteAsync(payload, cancellationToken);
}
