namespace WorkQueue;

/// <summary>
/// Describes one job, as <see cref="IWorkQueue.GetJobAsync(string, CancellationToken)"/> (in memory) and a durable queue's status read report it.
/// </summary>
/// <param name="Id">The job's id, unique within its queue: a number in memory, a Redis stream id (or <c>s</c> and one, for a job scheduled ahead) in a durable queue.</param>
/// <param name="QueueName">The name of the queue that accepted the job.</param>
/// <param name="Name">The handler type or delegate method that runs the job.</param>
/// <param name="State">Where the job is now.</param>
/// <param name="Attempt">The attempt it is on, or ran last (0 before its first start).</param>
/// <param name="EnqueuedAt">When the queue accepted it.</param>
/// <param name="StateSince">When it entered <paramref name="State"/> (for an ended job, when it ended), or <see langword="null"/> when the store cannot tell (a durable job running on another instance).</param>
/// <param name="RunAt">When a <see cref="JobState.Scheduled"/> job comes due, or a <see cref="JobState.Retrying"/> job's next attempt is due; otherwise the last such time, or <see langword="null"/>.</param>
/// <param name="StartedAt">When its current (or last) attempt started, or <see langword="null"/> if it never started.</param>
/// <param name="WorkerName">Who started its current (or last) attempt: the worker thread in memory, the instance's consumer in a durable queue; <see langword="null"/> if it never started.</param>
/// <param name="LastError">The message of the exception its last failed attempt threw, or <see langword="null"/>.</param>
/// <param name="CancelRequested">Whether a cancel by id asked the job to stop while it ran.</param>
public sealed record JobStatus(
    string Id,
    string QueueName,
    string Name,
    JobState State,
    int Attempt,
    DateTimeOffset EnqueuedAt,
    DateTimeOffset? StateSince,
    DateTimeOffset? RunAt,
    DateTimeOffset? StartedAt,
    string? WorkerName,
    string? LastError,
    bool CancelRequested)
{
    /// <summary>
    /// Gets a value indicating whether a cancel was requested while the job ran and the job ended some other way: it
    /// returned normally (<see cref="JobState.Succeeded"/>) or threw something other than an
    /// <see cref="OperationCanceledException"/> (<see cref="JobState.DeadLettered"/>, without a retry).
    /// </summary>
    public bool CancelIgnored => CancelRequested && State is JobState.Succeeded or JobState.DeadLettered;

    /// <summary>
    /// Gets the payload a typed job (<see cref="IJobHandler{TPayload}"/>) was enqueued with, while the job waits or runs;
    /// <see langword="null"/> for a delegate job, and once the job ended (an ended job kept for
    /// <see cref="WorkQueueOptions.FinishedJobRetention"/> holds no payload alive).
    /// </summary>
    /// <remarks>Payloads may hold personal data: show them only where the app means to.</remarks>
    public object? Payload { get; init; }

    /// <summary>
    /// Gets the job's attempts, oldest first, where its queue keeps them: a durable queue keeps each attempt's consumer,
    /// times, outcome and error (up to its history limit); an in-memory queue keeps none (empty).
    /// </summary>
    public IReadOnlyList<JobAttempt> Attempts { get; init; } = [];
}
