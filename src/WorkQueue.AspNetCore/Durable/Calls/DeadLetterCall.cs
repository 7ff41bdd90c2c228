using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/deadLetter.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its reply
/// read, in one place. The store (<c>RedisStreamStore.Settling.cs</c>) and the model test call it alike.
/// </summary>
internal static class DeadLetterCall
{
    /// <summary>Moves an entry this consumer holds (or that Redis lost) to the dead-letter stream and ends its job.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="consumer">The consumer that holds the entry.</param>
    /// <param name="entry">The entry.</param>
    /// <param name="error">The last attempt's error, as the dead letter and the job's record keep it (its separators become spaces).</param>
    /// <param name="reason">Why it is dead-lettered (<c>failed</c>, or <c>unreadable</c>).</param>
    /// <param name="finishedRetentionMs">How long the ended job's record is kept (0: not at all).</param>
    /// <returns><see langword="true"/> when stored; <see langword="false"/> when another consumer owns the entry now.</returns>
    public static bool Run(IDatabase db, RedisStreamKeys keys, string consumer, in SettledEntry entry, string error, string reason, long finishedRetentionMs) =>
        (long)db.ScriptEvaluate(DurableScripts.DeadLetter, Keys(keys), Arguments(consumer, entry, error, reason, finishedRetentionMs)) == 1;

    /// <summary>KEYS: stream, dead, epoch.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream, keys.Dead, keys.Epoch];

    /// <summary>
    /// ARGV: group, consumer, stream id, job id, payload, attempt, enqueued at, error, reason, idempotency key, epoch,
    /// vanished, started at, finished-job retention ms, cancel.
    /// </summary>
    public static RedisValue[] Arguments(string consumer, in SettledEntry entry, string error, string reason, long finishedRetentionMs) =>
    [
        RedisStreamKeys.Group,
        consumer,
        entry.StreamId,
        entry.JobId,
        entry.Payload,
        entry.Attempt,
        entry.EnqueuedAtMs,
        RecordText.Error(error),
        reason,
        entry.KeyArgument,
        entry.Epoch,
        entry.VanishedArgument,
        entry.StartedAtArgument,
        finishedRetentionMs,
        entry.CancelArgument,
    ];
}
