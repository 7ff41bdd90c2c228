namespace WorkQueue;

/// <summary>
/// The exception that is thrown when a queue does not accept a job.
/// </summary>
public sealed class JobRejectedException : InvalidOperationException
{
    /// <summary>
    /// Initializes a new instance of the <see cref="JobRejectedException"/> class.
    /// </summary>
    /// <param name="queueName">The name of the queue that rejected the job.</param>
    /// <param name="reason">Why the job was rejected.</param>
    /// <param name="message">A message that describes the rejection.</param>
    public JobRejectedException(string queueName, RejectionReason reason, string message)
        : base(message)
    {
        QueueName = queueName;
        Reason = reason;
    }

    /// <summary>
    /// Initializes a new instance of the <see cref="JobRejectedException"/> class with the exception that caused it.
    /// </summary>
    /// <param name="queueName">The name of the queue that rejected the job.</param>
    /// <param name="reason">Why the job was rejected.</param>
    /// <param name="message">A message that describes the rejection.</param>
    /// <param name="innerException">What made the queue reject the job (for example a Redis connection error).</param>
    public JobRejectedException(string queueName, RejectionReason reason, string message, Exception? innerException)
        : base(message, innerException)
    {
        QueueName = queueName;
        Reason = reason;
    }

    /// <summary>Gets the name of the queue that rejected the job.</summary>
    public string QueueName { get; }

    /// <summary>Gets why the job was rejected.</summary>
    public RejectionReason Reason { get; }
}
