namespace WorkQueue.AspNetCore;

/// <summary>
/// The exception that is thrown when a durable queue asks for replica acknowledgements
/// (<see cref="DurableQueueOptions.ReplicaAcknowledgements"/>) and Redis stored the job on the primary, but fewer
/// replicas than asked confirmed they had it within <see cref="DurableQueueOptions.ReplicaAcknowledgementTimeout"/>.
/// </summary>
/// <remarks>
/// <para>
/// The job is stored (under <see cref="JobId"/>) and runs as any other: this is not a rejection. What is not confirmed
/// is that it survives a failover: until a replica has it, a failover to a replica that lacks it loses it. Unlike
/// <see cref="EnqueueOutcomeUnknownException"/>, the outcome on the primary is known, so the job's status can be read
/// by its id.
/// </para>
/// <para>
/// Enqueuing it again stores it twice (both run) unless it has an idempotency key
/// (<see cref="JobOptions.IdempotencyKey"/>): a repeat with the same key stores nothing while the job lives and answers
/// its id, and completes normally once the replicas acknowledge, which confirms the first job too (a replica
/// acknowledges everything the primary wrote before). A producer that must know the job survives a failover repeats a
/// keyed enqueue until it completes; one that cannot wait may accept the job as stored on the primary.
/// </para>
/// </remarks>
public sealed class EnqueueNotReplicatedException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="EnqueueNotReplicatedException"/> class.</summary>
    /// <param name="queueName">The name of the queue the job was sent to.</param>
    /// <param name="jobId">The id the job was stored under (or, for a keyed enqueue that stored nothing, the id of the job that holds the key).</param>
    /// <param name="replicasRequired">How many replicas had to acknowledge.</param>
    /// <param name="replicasAcknowledged">How many did within the timeout.</param>
    /// <param name="message">A message that describes what happened.</param>
    /// <param name="innerException">The Redis error that left the acknowledgements unknown, if there was one.</param>
    public EnqueueNotReplicatedException(string queueName, string jobId, int replicasRequired, int replicasAcknowledged, string message, Exception? innerException = null)
        : base(message, innerException)
    {
        QueueName = queueName;
        JobId = jobId;
        ReplicasRequired = replicasRequired;
        ReplicasAcknowledged = replicasAcknowledged;
    }

    /// <summary>Gets the name of the queue the job was sent to.</summary>
    public string QueueName { get; }

    /// <summary>Gets the id the job is stored under on the primary (for a keyed enqueue that found its key held, the holder's id).</summary>
    public string JobId { get; }

    /// <summary>Gets how many replicas had to acknowledge the job (<see cref="DurableQueueOptions.ReplicaAcknowledgements"/>).</summary>
    public int ReplicasRequired { get; }

    /// <summary>Gets how many replicas acknowledged it within the timeout (0 when their answer was lost too).</summary>
    public int ReplicasAcknowledged { get; }
}
