namespace WorkQueue.AspNetCore;

/// <summary>
/// Enqueues jobs on a durable queue: each job is stored in Redis before <see cref="EnqueueAsync"/> completes, runs at
/// least once on one of the instances that consume the queue, and survives a crash of any of them.
/// </summary>
/// <remarks>
/// <para>
/// Resolve it by the queue's name (<c>[FromKeyedServices("sms")] IDurableQueue&lt;SmsRequest&gt;</c>), or without a key
/// when one durable queue has that payload type. Handlers must be idempotent: a job whose instance crashed is run again by
/// another, and ordering is not guaranteed across instances.
/// </para>
/// <para>
/// Durable jobs are payloads for the queue's handler, never delegates: a delegate cannot be stored. There is no
/// <c>TryEnqueue</c>: a job is accepted only once Redis has it.
/// </para>
/// </remarks>
/// <typeparam name="TPayload">The payload type, written as JSON.</typeparam>
public interface IDurableQueue<in TPayload>
{
    /// <summary>Gets the queue's name.</summary>
    string Name { get; }

    /// <summary>
    /// Stores a job in the queue's Redis stream. Concurrent calls are sent together in pipelined batches.
    /// </summary>
    /// <param name="payload">The payload.</param>
    /// <param name="cancellationToken">Cancels the wait for space when the queue is full in <see cref="QueueFullMode.Wait"/> mode.</param>
    /// <returns>The job's id in the stream.</returns>
    /// <exception cref="JobRejectedException">
    /// The queue is full and rejecting (or the wait for space passed <see cref="WorkQueueOptions.EnqueueTimeout"/>), or
    /// Redis could not be reached (<see cref="RejectionReason.StoreUnavailable"/>, with the cause as the inner exception).
    /// </exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled before Redis had the job.</exception>
    ValueTask<string> EnqueueAsync(TPayload payload, CancellationToken cancellationToken = default);
}
