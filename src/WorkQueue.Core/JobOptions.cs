namespace WorkQueue;

/// <summary>
/// Options for one enqueue: an idempotency key, and optionally a time to run at.
/// </summary>
public sealed class JobOptions
{
    /// <summary>The longest idempotency key, in UTF-16 characters.</summary>
    public const int MaxKeyLength = 256;

    /// <summary>
    /// Gets or sets the job's idempotency key: while a job enqueued with the same key on the same queue is queued,
    /// scheduled, running or waiting to be retried (and for <see cref="WorkQueueOptions.IdempotencyKeyRetention"/> after it
    /// succeeded), another enqueue with that key adds no job and is told which job holds it. The key is released when
    /// the job succeeds (after the retention), is dead-lettered, dropped, cancelled, or reported at a stop. Up to
    /// <see cref="MaxKeyLength"/> characters, no control characters, valid UTF-16 (no lone surrogate); compared ordinally. On a durable queue
    /// (WorkQueue.AspNetCore's <c>AddDurableQueue</c>) the key is kept in Redis, holds across every
    /// instance and follows its job through retries, hand-backs and reclaims.
    /// </summary>
    /// <value>The default value is <see langword="null"/>: no key.</value>
    public string? IdempotencyKey { get; set; }

    /// <summary>
    /// Gets or sets a delay before the job becomes ready (as <see cref="IWorkQueue.ScheduleAsync{THandler, TPayload}(TPayload, TimeSpan, CancellationToken)"/>); not with <see cref="RunAt"/>.
    /// </summary>
    /// <value>The default value is <see langword="null"/>: ready now.</value>
    public TimeSpan? Delay { get; set; }

    /// <summary>
    /// Gets or sets when the job becomes ready (as <see cref="IWorkQueue.ScheduleAsync{THandler, TPayload}(TPayload, DateTimeOffset, CancellationToken)"/>); not with <see cref="Delay"/>.
    /// </summary>
    /// <value>The default value is <see langword="null"/>: ready now.</value>
    public DateTimeOffset? RunAt { get; set; }

    /// <summary>Checks the options, naming what is wrong.</summary>
    internal void Validate(string paramName)
    {
        if (IdempotencyKey is { } key)
        {
            if (key.Length == 0 || key.Length > MaxKeyLength)
            {
                throw new ArgumentException($"JobOptions.IdempotencyKey must be 1 to {MaxKeyLength} characters; it was {key.Length}.", paramName);
            }

            if (key.AsSpan().IndexOfAnyInRange('\0', '\u001f') >= 0 || key.Contains('\u007f', StringComparison.Ordinal))
            {
                throw new ArgumentException("JobOptions.IdempotencyKey must not contain control characters.", paramName);
            }

            if (HasLoneSurrogate(key))
            {
                // A durable queue stores the key as UTF-8, where every lone surrogate becomes U+FFFD: keys that differ
                // only there would name one key. In memory too, so a key means the same on both kinds of queue.
                throw new ArgumentException("JobOptions.IdempotencyKey must be valid UTF-16 (no lone surrogate).", paramName);
            }
        }

        if (Delay is not null && RunAt is not null)
        {
            throw new ArgumentException("JobOptions.Delay and JobOptions.RunAt cannot both be set.", paramName);
        }
    }

    private static bool HasLoneSurrogate(string value)
    {
        for (int i = 0; i < value.Length; i++)
        {
            if (char.IsHighSurrogate(value[i]) && i + 1 < value.Length && char.IsLowSurrogate(value[i + 1]))
            {
                i++;
            }
            else if (char.IsSurrogate(value[i]))
            {
                return true;
            }
        }

        return false;
    }
}
