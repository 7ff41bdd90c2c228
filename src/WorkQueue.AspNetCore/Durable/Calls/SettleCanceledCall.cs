using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/settleCanceled.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its
/// reply read, in one place. The store (<c>RedisStreamStore.Settling.cs</c>) and the model test call it alike.
/// </summary>
internal static class SettleCanceledCall
{
    /// <summary>Ends an entry this consumer holds (or that Redis lost) as cancelled: it honoured a cancel, or the cancel came before it started.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="consumer">The consumer that holds the entry.</param>
    /// <param name="entry">The entry.</param>
    /// <param name="finishedRetentionMs">How long the ended job's record is kept (0: not at all).</param>
    /// <returns><see langword="true"/> when settled; <see langword="false"/> when another consumer owns the entry now.</returns>
    public static bool Run(IDatabase db, RedisStreamKeys keys, string consumer, in SettledEntry entry, long finishedRetentionMs) =>
        (long)db.ScriptEvaluate(DurableScripts.SettleCanceled, Keys(keys), Arguments(consumer, entry, finishedRetentionMs)) == 1;

    /// <summary>KEYS: stream, epoch.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream, keys.Epoch];

    /// <summary>
    /// ARGV: group, consumer, stream id, job id, attempt, enqueued at, started at, idempotency key, epoch, vanished,
    /// finished-job retention ms, job type ('' for the queue's default type).
    /// </summary>
    public static RedisValue[] Arguments(string consumer, in SettledEntry entry, long finishedRetentionMs) =>
    [
        RedisStreamKeys.Group,
        consumer,
        entry.StreamId,
        entry.JobId,
        entry.Attempt,
        entry.EnqueuedAtMs,
        entry.StartedAtArgument,
        entry.KeyArgument,
        entry.Epoch,
        entry.VanishedArgument,
        finishedRetentionMs,
        entry.JobTypeArgument,
    ];
}
