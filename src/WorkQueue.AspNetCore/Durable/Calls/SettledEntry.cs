using System.Globalization;
using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// What the settle scripts (<c>scheduleRetry.lua</c>, <c>deadLetter.lua</c>, <c>settleCanceled.lua</c>,
/// <c>release.lua</c>) are told of an entry a consumer holds: which entry and job it is, what it carries, and whether
/// this consumer already found that Redis lost it. The store makes one from a <see cref="DurableEntry"/>
/// (<see cref="Of"/>); the model test from what its consumers hold.
/// </summary>
/// <param name="StreamId">The entry's stream id.</param>
/// <param name="JobId">The job's id (its first stream id, or <c>s{ms}-{n}</c> for a scheduled job).</param>
/// <param name="Payload">The job's payload.</param>
/// <param name="Attempt">The attempt this entry is (1 for the first).</param>
/// <param name="EnqueuedAtMs">When the job was first enqueued (Unix ms).</param>
/// <param name="Key">The job's idempotency key, or <see langword="null"/>.</param>
/// <param name="Epoch">The epoch the entry was fetched under (see <c>includes/epoch.lua</c>).</param>
/// <param name="Vanished">Whether this consumer already found that Redis lost the entry (<c>includes/vanished.lua</c>).</param>
/// <param name="CancelRequested">Whether a cancel of the job was asked while it ran.</param>
/// <param name="StartedAtMs">When this attempt started (Unix ms), or 0 when it never started.</param>
internal readonly record struct SettledEntry(
    string StreamId, string JobId, string Payload, int Attempt, long EnqueuedAtMs, string? Key, string Epoch, bool Vanished, bool CancelRequested, long StartedAtMs)
{
    /// <summary>Gets the idempotency key as the scripts take it: empty for none.</summary>
    public string KeyArgument => Key ?? string.Empty;

    /// <summary>Gets the vanished flag as the scripts take it: 1 or 0.</summary>
    public int VanishedArgument => Vanished ? 1 : 0;

    /// <summary>Gets the start time as the scripts take it: empty when the attempt never started.</summary>
    public RedisValue StartedAtArgument => StartedAtMs > 0 ? StartedAtMs : RedisValue.EmptyString;

    /// <summary>Gets the job type's name as records store it (<see cref="JobTypeEnvelope"/>): empty for the queue's default type.</summary>
    public string JobTypeArgument => JobTypeEnvelope.Read(Payload, out _) ?? string.Empty;

    /// <summary>Gets the cancel flag as the scripts take it: <c>1</c> or empty.</summary>
    public string CancelArgument => CancelRequested ? "1" : string.Empty;

    /// <summary>
    /// Gets the delayed-set member of this entry's retry (<c>{job id}|{next attempt}|{enqueued at}|{payload}</c>, the
    /// key framed by <c>\u0001</c> before the payload when the job has one; read back by <c>includes/round/promote.lua</c>).
    /// </summary>
    public string RetryMember => Member(Attempt + 1);

    /// <summary>Gets the delayed-set member of this entry handed back unrun, as the same attempt (<c>postpone.lua</c>).</summary>
    public string SameAttemptMember => Member(Attempt);

    private string Member(int attempt) => Key is { } key
        ? string.Create(CultureInfo.InvariantCulture, $"{JobId}|{attempt}|{EnqueuedAtMs}|\u0001{key}\u0001{Payload}")
        : string.Create(CultureInfo.InvariantCulture, $"{JobId}|{attempt}|{EnqueuedAtMs}|{Payload}");

    /// <summary>What the store tells the settle scripts of an entry it holds.</summary>
    public static SettledEntry Of(DurableEntry entry) => new(
        entry.StreamId, entry.JobId, entry.Payload, entry.Attempt, entry.EnqueuedAtMs, entry.IdempotencyKey, entry.Epoch, entry.Vanished, entry.CancelRequested, entry.StartedAtMs);
}
