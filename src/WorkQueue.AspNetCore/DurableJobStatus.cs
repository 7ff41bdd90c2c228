namespace WorkQueue.AspNetCore;

/// <summary>
/// Describes one job of a durable queue, as <see cref="IDurableQueue{TPayload}.GetJobAsync(string, CancellationToken)"/>
/// reads it from Redis: where it is now, across every instance, and the attempts it made.
/// </summary>
/// <param name="Id">The job's id, as <c>EnqueueAsync</c> or <c>ScheduleAsync</c> returned it.</param>
/// <param name="QueueName">The durable queue's name.</param>
/// <param name="State">
/// Where the job is: <see cref="JobState.Queued"/>, <see cref="JobState.Scheduled"/>, <see cref="JobState.Running"/>
/// (delivered to a consumer: running there, or waiting in its prefetch), <see cref="JobState.Retrying"/>, or ended:
/// <see cref="JobState.Succeeded"/>, <see cref="JobState.DeadLettered"/> or <see cref="JobState.Canceled"/>.
/// </param>
/// <param name="Attempt">The attempt it is on, or ran last (1 for the first run).</param>
/// <param name="EnqueuedAt">When it was first enqueued (Redis's clock).</param>
/// <param name="StateSince">
/// When it entered <paramref name="State"/> (for an ended job, when it ended), or <see langword="null"/> when Redis does
/// not keep it: a job running on another instance (Redis knows when its consumer last claimed it, not when it started).
/// </param>
/// <param name="RunAt">When a <see cref="JobState.Scheduled"/> job comes due, or a <see cref="JobState.Retrying"/> job's next attempt is due; otherwise <see langword="null"/>.</param>
/// <param name="StartedAt">When its last attempt started, when known (an ended job's, or one running in this process), else <see langword="null"/>.</param>
/// <param name="ConsumerName">The consumer (one per process start, see <see cref="DurableQueueSnapshot.ConsumerName"/>) that runs it now, or ran its last attempt.</param>
/// <param name="LastError">The error of its last failed attempt, or <see langword="null"/>.</param>
/// <param name="CancelRequested">Whether a cancel by id was asked for while it was delivered to a consumer.</param>
/// <param name="Attempts">Its attempts, oldest first: each failed one, then the one that ended it or runs now.</param>
public sealed record DurableJobStatus(
    string Id,
    string QueueName,
    JobState State,
    int Attempt,
    DateTimeOffset EnqueuedAt,
    DateTimeOffset? StateSince,
    DateTimeOffset? RunAt,
    DateTimeOffset? StartedAt,
    string? ConsumerName,
    string? LastError,
    bool CancelRequested,
    IReadOnlyList<DurableJobAttempt> Attempts)
{
    /// <summary>
    /// Gets a value indicating whether a cancel was asked for while the job was delivered and it ended some other way: it
    /// returned normally (<see cref="JobState.Succeeded"/>) or threw something other than an
    /// <see cref="OperationCanceledException"/> (<see cref="JobState.DeadLettered"/>, without a retry).
    /// </summary>
    public bool CancelIgnored => CancelRequested && State is JobState.Succeeded or JobState.DeadLettered;
}
