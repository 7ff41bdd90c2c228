using System.Diagnostics.CodeAnalysis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The <see cref="IDurableQueue{TPayload}"/> of a queue declared with a job type (its default one): each call is the
/// queue's own (<see cref="DurableWorkQueue"/>) for that job type.
/// </summary>
internal sealed class DurableProducer<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload> : IDurableQueue<TPayload>
    where THandler : class, IJobHandler<TPayload>
{
    private readonly DurableWorkQueue _queue;
    private readonly RedisStreamStore _store;

    public DurableProducer(RedisStreamStore store, DurableWorkQueue queue)
    {
        _store = store;
        _queue = queue;
    }

    public string Name => _queue.Name;

    public ValueTask<string> EnqueueAsync(TPayload payload, CancellationToken cancellationToken = default) =>
        _store.EnqueueAsync(_queue.Stored<THandler, TPayload>(payload), cancellationToken);

    public ValueTask<EnqueueResult> EnqueueAsync(TPayload payload, JobOptions options, CancellationToken cancellationToken = default) =>
        _queue.EnqueueAsync<THandler, TPayload>(payload, options, cancellationToken);

    public ValueTask<string> ScheduleAsync(TPayload payload, TimeSpan delay, CancellationToken cancellationToken = default) =>
        _queue.ScheduleAsync<THandler, TPayload>(payload, delay, cancellationToken);

    public ValueTask<string> ScheduleAsync(TPayload payload, DateTimeOffset runAt, CancellationToken cancellationToken = default) =>
        _queue.ScheduleAsync<THandler, TPayload>(payload, runAt, cancellationToken);

    public ValueTask<bool> CancelScheduledAsync(string jobId, CancellationToken cancellationToken = default) =>
        _queue.CancelScheduledAsync(jobId, cancellationToken);

    public ValueTask<JobStatus?> GetJobAsync(string jobId, CancellationToken cancellationToken = default) =>
        _queue.GetJobAsync(jobId, cancellationToken);

    public ValueTask<JobCancelResult> CancelAsync(string jobId, CancellationToken cancellationToken = default) =>
        _queue.CancelAsync(jobId, cancellationToken);

    public ValueTask<JobPage> FindJobsAsync(JobQuery query, CancellationToken cancellationToken = default) =>
        _queue.FindJobsAsync(query, cancellationToken);
}
