namespace WorkQueue.AspNetCore;

/// <summary>
/// The exception that is thrown when a durable enqueue was sent to Redis but its answer never came (the call timed out,
/// or the connection dropped after sending it): the job may or may not have been stored.
/// </summary>
/// <remarks>
/// Unlike <see cref="JobRejectedException"/>, this does not say the job was not stored: Redis may have stored it and
/// only its reply was lost, and then it runs. Enqueuing it again may store it twice, unless it has an idempotency key
/// (<see cref="JobOptions.IdempotencyKey"/>): a repeat with the same key stores at most one job, and answers the id of
/// the one stored (<see cref="EnqueueResult.Created"/> <see langword="false"/>), so retrying a keyed enqueue is safe.
/// </remarks>
public sealed class EnqueueOutcomeUnknownException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="EnqueueOutcomeUnknownException"/> class.</summary>
    /// <param name="queueName">The name of the queue the job was sent to.</param>
    /// <param name="message">A message that describes what happened.</param>
    /// <param name="innerException">The Redis error that left the outcome unknown.</param>
    public EnqueueOutcomeUnknownException(string queueName, string message, Exception? innerException)
        : base(message, innerException)
    {
        QueueName = queueName;
    }

    /// <summary>Gets the name of the queue the job was sent to.</summary>
    public string QueueName { get; }
}
