using System.Diagnostics.CodeAnalysis;
using Microsoft.Extensions.DependencyInjection;

namespace WorkQueue.Testing.Internal;

/// <summary>
/// A queue's producer as the harness hands it out: each enqueue or schedule is recorded, then sent to the real queue
/// (Run), held (Record) or run in the caller's call (Inline), as the queue's mode says when the call is made. Reading
/// and cancelling answer for the jobs the harness holds or ran, and ask the real queue about the others.
/// </summary>
internal sealed class RecordingWorkQueue(IWorkQueue inner, WorkQueueTestHarness harness) : IWorkQueue
{
    public string Name => inner.Name;

    public async ValueTask EnqueueAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload> =>
        await SubmitAsync(
            typeof(THandler), payload, null, null, null,
            async () =>
            {
                await inner.EnqueueAsync<THandler, TPayload>(payload, cancellationToken).ConfigureAwait(false);
                return (null, true);
            },
            Handler<THandler, TPayload>(payload),
            cancellationToken).ConfigureAwait(false);

    public ValueTask<EnqueueResult> EnqueueAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, JobOptions options, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload>
    {
        Check(options);
        return SubmitAsync(
            typeof(THandler), payload, options, null, null,
            async () =>
            {
                var result = await inner.EnqueueAsync<THandler, TPayload>(payload, options, cancellationToken).ConfigureAwait(false);
                return (result.JobId, result.Created);
            },
            Handler<THandler, TPayload>(payload),
            cancellationToken);
    }

    public async ValueTask<string> ScheduleAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, TimeSpan delay, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload> =>
        (await SubmitAsync(
            typeof(THandler), payload, null, delay, null,
            async () => (await inner.ScheduleAsync<THandler, TPayload>(payload, delay, cancellationToken).ConfigureAwait(false), true),
            Handler<THandler, TPayload>(payload),
            cancellationToken).ConfigureAwait(false)).JobId;

    public async ValueTask<string> ScheduleAsync<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload, DateTimeOffset runAt, CancellationToken cancellationToken = default)
        where THandler : class, IJobHandler<TPayload> =>
        (await SubmitAsync(
            typeof(THandler), payload, null, null, runAt,
            async () => (await inner.ScheduleAsync<THandler, TPayload>(payload, runAt, cancellationToken).ConfigureAwait(false), true),
            Handler<THandler, TPayload>(payload),
            cancellationToken).ConfigureAwait(false)).JobId;

    public ValueTask<bool> CancelScheduledAsync(string jobId, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(jobId);
        return harness.Cancel(Name, jobId, scheduledOnly: true) is { } held
            ? ValueTask.FromResult(held.Outcome == JobCancelOutcome.Canceled)
            : inner.CancelScheduledAsync(jobId, cancellationToken);
    }

    public ValueTask<JobStatus?> GetJobAsync(string jobId, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(jobId);
        return harness.Status(Name, jobId) is { } held ? ValueTask.FromResult<JobStatus?>(held) : inner.GetJobAsync(jobId, cancellationToken);
    }

    public ValueTask<JobCancelResult> CancelAsync(string jobId, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(jobId);
        return harness.Cancel(Name, jobId, scheduledOnly: false) is { } held ? ValueTask.FromResult(held) : inner.CancelAsync(jobId, cancellationToken);
    }

    public ValueTask<JobPage> FindJobsAsync(JobQuery query, CancellationToken cancellationToken = default) => inner.FindJobsAsync(query, cancellationToken);

    /// <summary>Runs a typed job as a queue would: its handler from the job's own scope (registered, or made by its constructor).</summary>
    internal static Func<IServiceProvider, CancellationToken, ValueTask> Handler<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(TPayload payload)
        where THandler : class, IJobHandler<TPayload> =>
        (services, cancellationToken) => ActivatorUtilities.GetServiceOrCreateInstance<THandler>(services).ExecuteAsync(payload, cancellationToken);

    /// <summary>Checks options as the queue would, so a held or inline job is refused where the real queue refuses it.</summary>
    internal static void Check(JobOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate(nameof(options));
    }

    /// <summary>Records a call and does what the queue's mode says with it.</summary>
    internal async ValueTask<EnqueueResult> SubmitAsync(
        Type? handlerType,
        object? payload,
        JobOptions? options,
        TimeSpan? delay,
        DateTimeOffset? runAt,
        Func<ValueTask<(string? JobId, bool Created)>> send,
        Func<IServiceProvider, CancellationToken, ValueTask> run,
        CancellationToken cancellationToken)
    {
        var mode = harness.GetMode(Name);
        var job = harness.Record(Name, handlerType, payload, options, delay, runAt, mode, run);
        switch (mode)
        {
            case WorkQueueTestMode.Run:
                (string? JobId, bool Created) answer;
                try
                {
                    answer = await send().ConfigureAwait(false);
                }
                catch
                {
                    // Refused (full, stopped, invalid): no job was added, so none is recorded.
                    harness.Forget(job);
                    throw;
                }

                harness.Answered(job, answer.JobId, answer.Created);
                return new EnqueueResult(answer.JobId ?? string.Empty, answer.Created);
            case WorkQueueTestMode.Record:
                return new EnqueueResult(job.JobId!, job.Created);
            default:
                await harness.RunInlineAsync(job, run, cancellationToken).ConfigureAwait(false);
                return new EnqueueResult(job.JobId!, true);
        }
    }

    /// <summary>The synchronous form of <see cref="SubmitAsync"/>, for <see cref="IInMemoryWorkQueue"/>'s <c>TryEnqueue</c> and <c>Schedule</c>.</summary>
    internal (string? JobId, bool Created) Submit(
        Type? handlerType,
        object? payload,
        TimeSpan? delay,
        DateTimeOffset? runAt,
        Func<(string? JobId, bool Created)> send,
        Func<IServiceProvider, CancellationToken, ValueTask> run)
    {
        var mode = harness.GetMode(Name);
        var job = harness.Record(Name, handlerType, payload, null, delay, runAt, mode, run);
        switch (mode)
        {
            case WorkQueueTestMode.Run:
                (string? JobId, bool Created) answer;
                try
                {
                    answer = send();
                }
                catch
                {
                    harness.Forget(job);
                    throw;
                }

                harness.Answered(job, answer.JobId, answer.Created);
                return answer;
            case WorkQueueTestMode.Record:
                return (job.JobId, true);
            default:
                harness.RunInline(job, run);
                return (job.JobId, true);
        }
    }
}
