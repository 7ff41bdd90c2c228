using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/stats.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its reply read,
/// in one place. The store (<c>RedisStreamStore.Fetching.cs</c>, <c>ReadStats</c>) and the model test call it alike.
/// </summary>
internal static class StatsCall
{
    /// <summary>Reads the queue's cluster-wide counts and its group's consumers.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <returns>The counts.</returns>
    public static StatsReply Run(IDatabase db, RedisStreamKeys keys) =>
        StatsReply.Read(db.ScriptEvaluate(DurableScripts.Stats, Keys(keys), Arguments()));

    /// <summary>KEYS: stream, delayed, dead, scheduled.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream, keys.Delayed, keys.Dead, keys.Scheduled];

    /// <summary>ARGV: group.</summary>
    public static RedisValue[] Arguments() =>
    [
        RedisStreamKeys.Group,
    ];
}

/// <summary>What <c>stats.lua</c> answers.</summary>
/// <param name="Length">The stream's unsettled entries: pending + lag, or the stream's length when Redis cannot tell the lag.</param>
/// <param name="DelayedRetries">The delayed set's members that are retries (not scheduled jobs).</param>
/// <param name="DeadLetters">The dead-letter stream's length.</param>
/// <param name="Pending">The group's pending entries (0 without the group).</param>
/// <param name="Lag">The entries no consumer has read yet, or <see langword="null"/> when Redis cannot tell.</param>
/// <param name="Consumers">The group's consumers.</param>
/// <param name="Scheduled">The scheduled jobs not yet due.</param>
internal readonly record struct StatsReply(long Length, long DelayedRetries, long DeadLetters, long Pending, long? Lag, StatsConsumer[] Consumers, long Scheduled)
{
    /// <summary>Reads the script's reply: <c>{ length, delayed retries, dead letters, pending, lag or -1, { name, pending, idle ms }..., scheduled }</c>.</summary>
    public static StatsReply Read(RedisResult reply)
    {
        var r = (RedisResult[])reply!;
        var consumers = ((RedisResult[])r[5]!)
            .Select(static c => (RedisResult[])c!)
            .Select(static c => new StatsConsumer((string)c[0]!, (long)c[1], (long)c[2]))
            .ToArray();
        long lag = (long)r[4];
        return new StatsReply((long)r[0], (long)r[1], (long)r[2], (long)r[3], lag < 0 ? null : lag, consumers, (long)r[6]);
    }
}

/// <summary>One of the group's consumers, as <c>stats.lua</c> reads it from <c>XINFO CONSUMERS</c>.</summary>
/// <param name="Name">The consumer's name.</param>
/// <param name="Pending">The entries pending for it.</param>
/// <param name="IdleMs">How long since it last read or claimed (Redis's <c>idle</c>).</param>
internal readonly record struct StatsConsumer(string Name, long Pending, long IdleMs);
