using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/reclaim.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its reply
/// read, in one place. The store (<c>RedisStreamStore.Fetching.cs</c>, <c>Reclaim</c>) and the model test call it alike.
/// </summary>
internal static class ReclaimCall
{
    /// <summary>
    /// Claims for <paramref name="consumer"/> up to <paramref name="count"/> entries whose consumer has not refreshed them
    /// for <paramref name="minIdleMs"/>, from <paramref name="cursor"/>; one delivered more than
    /// <paramref name="maxDeliveries"/> times is dead-lettered as poison, one whose job was asked to cancel ends as
    /// cancelled. With <paramref name="count"/> 0 it only looks whether some entry has been idle that long.
    /// </summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="consumer">The consumer that takes the entries.</param>
    /// <param name="minIdleMs">How long an entry must have gone unrefreshed to be taken.</param>
    /// <param name="cursor">Where this consumer's scan of the pending entries goes on from (<c>0-0</c> for the start).</param>
    /// <param name="count">How many entries it has room for; 0 to only look.</param>
    /// <param name="maxDeliveries">The deliveries after which an entry is poison.</param>
    /// <param name="finishedRetentionMs">How long an ended job's record is kept (0: not at all).</param>
    /// <returns>The script's reply, read.</returns>
    public static ReclaimReply Run(IDatabase db, RedisStreamKeys keys, string consumer, long minIdleMs, string cursor, int count, int maxDeliveries, long finishedRetentionMs) =>
        ReclaimReply.Read(
            db.ScriptEvaluate(DurableScripts.Reclaim, Keys(keys), Arguments(consumer, minIdleMs, cursor, count, maxDeliveries, finishedRetentionMs)),
            looked: count == 0);

    /// <summary>KEYS: stream, dead, epoch.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream, keys.Dead, keys.Epoch];

    /// <summary>ARGV: group, consumer, min idle ms, cursor, count, max deliveries, finished-job retention ms.</summary>
    public static RedisValue[] Arguments(string consumer, long minIdleMs, string cursor, int count, int maxDeliveries, long finishedRetentionMs) =>
    [
        RedisStreamKeys.Group,
        consumer,
        minIdleMs,
        cursor,
        count,
        maxDeliveries,
        finishedRetentionMs,
    ];
}

/// <summary>What <c>reclaim.lua</c> answers.</summary>
/// <param name="Cursor">Where the next reclaim goes on from (a look answers the cursor it was given).</param>
/// <param name="Claimed">The entries now this consumer's (neither poison nor cancelled).</param>
/// <param name="EndedAny">Whether it dead-lettered or cancelled any entry (the next round trims); never for a look.</param>
/// <param name="IdleWaiting">For a look (count 0): whether some entry has been idle for min idle; never otherwise.</param>
/// <param name="Epoch">The queue's epoch, which the claimed entries are held under (empty when unknown, and for a look).</param>
internal readonly record struct ReclaimReply(string Cursor, List<DurableEntry> Claimed, bool EndedAny, bool IdleWaiting, string Epoch)
{
    /// <summary>Reads the script's reply: <c>{ next cursor, { id, fields, deliveries }..., flag, epoch }</c>, whose flag says what <paramref name="looked"/> asked.</summary>
    public static ReclaimReply Read(RedisResult reply, bool looked)
    {
        var parts = (RedisResult[])reply!;
        bool flag = (long)parts[2] > 0;
        return new ReclaimReply((string)parts[0]!, ClaimedEntries.Read(parts[1]), EndedAny: !looked && flag, IdleWaiting: looked && flag, (string?)parts[3] ?? string.Empty);
    }
}
