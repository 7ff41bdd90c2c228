using System.Globalization;

namespace WorkQueue.Testing;

/// <summary>
/// One job that application code enqueued or scheduled, as the test harness recorded it: the queue, the handler, the
/// payload and the options, whatever the queue then did with it (see <see cref="Mode"/>).
/// </summary>
public sealed class EnqueuedJob
{
    internal EnqueuedJob(
        string queueName,
        Type? handlerType,
        object? payload,
        string? jobId,
        string? idempotencyKey,
        TimeSpan? delay,
        DateTimeOffset? runAt,
        bool created,
        WorkQueueTestMode mode,
        DateTimeOffset enqueuedAt)
    {
        QueueName = queueName;
        HandlerType = handlerType;
        Payload = payload;
        JobId = jobId;
        IdempotencyKey = idempotencyKey;
        Delay = delay;
        RunAt = runAt;
        Created = created;
        Mode = mode;
        EnqueuedAt = enqueuedAt;
        State = delay is not null || runAt is not null ? JobState.Scheduled : JobState.Queued;
    }

    /// <summary>Gets the name of the queue the job was given to, as the queue spells it.</summary>
    public string QueueName { get; }

    /// <summary>
    /// Gets the job's handler type: <c>THandler</c> of a typed call, or the type of a handler instance given to an
    /// in-memory queue; <see langword="null"/> for a delegate job.
    /// </summary>
    public Type? HandlerType { get; }

    /// <summary>Gets the payload as it was given (the delegate itself for a delegate job).</summary>
    public object? Payload { get; }

    /// <summary>
    /// Gets the job's id: the one the queue handed out (<see cref="WorkQueueTestMode.Run"/>), or one made up by the
    /// harness (<see cref="WorkQueueTestMode.Record"/>, <see cref="WorkQueueTestMode.Inline"/>); <see langword="null"/>
    /// when the call returns no id (an enqueue without <see cref="JobOptions"/> in Run mode).
    /// </summary>
    public string? JobId { get; internal set; }

    /// <summary>Gets the idempotency key the call gave (<see cref="JobOptions.IdempotencyKey"/>), if any.</summary>
    public string? IdempotencyKey { get; }

    /// <summary>Gets the delay the call gave (a <c>ScheduleAsync</c> delay or <see cref="JobOptions.Delay"/>), if any.</summary>
    public TimeSpan? Delay { get; }

    /// <summary>Gets the time to run at the call gave (a <c>ScheduleAsync</c> time or <see cref="JobOptions.RunAt"/>), if any.</summary>
    public DateTimeOffset? RunAt { get; }

    /// <summary>
    /// Gets a value indicating whether the call added a job: <see langword="false"/> when the idempotency key was held by
    /// another job (in Record mode, by an earlier recorded job of the same queue with that key), or a <c>TryEnqueue</c>
    /// was refused.
    /// </summary>
    public bool Created { get; internal set; }

    /// <summary>Gets what the queue did with the job: ran it, held it, or ran it inline.</summary>
    public WorkQueueTestMode Mode { get; }

    /// <summary>Gets when the job was enqueued, on the engine's clock (the fake one, when the test gave one).</summary>
    public DateTimeOffset EnqueuedAt { get; }

    /// <summary>Gets or sets where a job the harness holds or ran inline stands (guarded by the harness's lock).</summary>
    internal JobState State { get; set; }

    /// <summary>Gets or sets the error an inline job threw.</summary>
    internal string? Error { get; set; }

    /// <summary>Gets or sets how to run the job in the caller's call (Inline mode, and a held job's later run).</summary>
    internal Func<IServiceProvider, CancellationToken, ValueTask>? Run { get; set; }

    /// <summary>Gets the payload as <typeparamref name="TPayload"/>.</summary>
    /// <typeparam name="TPayload">The payload's type.</typeparam>
    /// <returns>The payload.</returns>
    /// <exception cref="InvalidCastException">The payload is not a <typeparamref name="TPayload"/>; the message names both types.</exception>
    public TPayload PayloadAs<TPayload>() => Payload is TPayload payload
        ? payload
        : throw new InvalidCastException($"The payload of job {JobId ?? "(no id)"} on queue '{QueueName}' is {Payload?.GetType().Name ?? "null"}, not {typeof(TPayload).Name}.");

    /// <summary>Describes the job in one line, for assertion messages.</summary>
    /// <returns>The description.</returns>
    public override string ToString()
    {
        string handler = HandlerType?.Name ?? "delegate";
        string options = string.Concat(
            IdempotencyKey is null ? string.Empty : $", key '{IdempotencyKey}'",
            Delay is { } delay ? $", delay {delay}" : string.Empty,
            RunAt is { } runAt ? string.Create(CultureInfo.InvariantCulture, $", run at {runAt:O}") : string.Empty,
            Created ? string.Empty : ", not created");
        return $"{QueueName}: {handler}({(HandlerType is null ? string.Empty : Payload)}) id {JobId ?? "-"}, {Mode}{options}";
    }
}
