using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/adopt.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its reply read,
/// in one place. The store (<c>RedisStreamStore.Fetching.cs</c>, <c>AdoptOwnIfNeeded</c>) calls it.
/// </summary>
internal static class AdoptCall
{
    /// <summary>Takes back entries pending for <paramref name="consumer"/> that it does not hold (a call that read them lost its reply).</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="consumer">The consumer the entries are pending for.</param>
    /// <param name="streamIds">The stream ids pending here but not held.</param>
    /// <returns>The entries still pending here, and the epoch they are held under.</returns>
    public static AdoptReply Run(IDatabase db, RedisStreamKeys keys, string consumer, ReadOnlySpan<string> streamIds) =>
        AdoptReply.Read(db.ScriptEvaluate(DurableScripts.Adopt, Keys(keys), Arguments(consumer, streamIds)));

    /// <summary>KEYS: stream, epoch.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream, keys.Epoch];

    /// <summary>ARGV: group, consumer, then the stream ids.</summary>
    public static RedisValue[] Arguments(string consumer, ReadOnlySpan<string> streamIds)
    {
        const int First = 2;
        var args = new RedisValue[First + streamIds.Length];
        args[0] = RedisStreamKeys.Group;
        args[1] = consumer;
        for (int i = 0; i < streamIds.Length; i++)
        {
            args[First + i] = streamIds[i];
        }

        return args;
    }
}

/// <summary>What <c>adopt.lua</c> answers.</summary>
/// <param name="Found">The entries still pending for the consumer (one deleted meanwhile was acknowledged instead).</param>
/// <param name="Epoch">The queue's epoch, which the entries are held under (empty when unknown).</param>
internal readonly record struct AdoptReply(List<DurableEntry> Found, string Epoch)
{
    /// <summary>Reads the script's reply: <c>{ { id, fields, deliveries }..., epoch }</c>.</summary>
    public static AdoptReply Read(RedisResult reply)
    {
        var parts = (RedisResult[])reply!;
        return new AdoptReply(ClaimedEntries.Read(parts[0]), (string?)parts[1] ?? string.Empty);
    }
}
