using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/postpone.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its reply
/// read, in one place. The store (<c>RedisStreamStore.Settling.cs</c>) and the script tests call it alike.
/// </summary>
internal static class PostponeCall
{
    /// <summary>Hands an entry this consumer holds back unrun, as the same attempt, due after <paramref name="delayMs"/> by Redis's clock.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="consumer">The consumer that holds the entry.</param>
    /// <param name="entry">The entry.</param>
    /// <param name="delayMs">How long until it may be fetched again.</param>
    /// <returns><see langword="true"/> when stored; <see langword="false"/> when another consumer owns the entry now.</returns>
    public static bool Run(IDatabase db, RedisStreamKeys keys, string consumer, in SettledEntry entry, long delayMs) =>
        (long)db.ScriptEvaluate(DurableScripts.Postpone, Keys(keys), Arguments(keys, consumer, entry, delayMs)) == 1;

    /// <summary>KEYS: stream, delayed, epoch.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream, keys.Delayed, keys.Epoch];

    /// <summary>ARGV: group, consumer, stream id, delay ms, delayed-set member (same attempt), job id, idempotency key, epoch, vanished, nudge channel.</summary>
    public static RedisValue[] Arguments(RedisStreamKeys keys, string consumer, in SettledEntry entry, long delayMs) =>
    [
        RedisStreamKeys.Group,
        consumer,
        entry.StreamId,
        delayMs,
        entry.SameAttemptMember,
        entry.JobId,
        entry.KeyArgument,
        entry.Epoch,
        entry.VanishedArgument,
        keys.NudgeName,
    ];
}
