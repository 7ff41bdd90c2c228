namespace WorkQueue;

/// <summary>
/// Handles jobs that carry a payload of type <typeparamref name="TPayload"/>.
/// </summary>
/// <typeparam name="TPayload">The type of the job's payload.</typeparam>
/// <remarks>
/// Enqueuing a handler with a reference-type payload allocates nothing: the queue stores the handler, the payload
/// and a cached invoker. A value-type payload is boxed once.
/// </remarks>
public interface IJobHandler<in TPayload>
{
    /// <summary>
    /// Executes one job on a queue worker.
    /// </summary>
    /// <param name="payload">The payload the job was enqueued with.</param>
    /// <param name="cancellationToken">
    /// Cancelled when the job exceeds <see cref="WorkQueueOptions.JobTimeout"/> or when shutdown gives up waiting for it.
    /// </param>
    /// <returns>A task that completes when the job is done.</returns>
    ValueTask ExecuteAsync(TPayload payload, CancellationToken cancellationToken);
}
