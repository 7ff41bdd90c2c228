using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/keepAlive.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its reply
/// read, in one place. The store (<c>RedisStreamStore.Fetching.cs</c>, <c>KeepAlive</c>) and the model test call it alike.
/// </summary>
internal static class KeepAliveCall
{
    /// <summary>The arguments of each held entry: its stream id and the epoch it was fetched under.</summary>
    private const int Stride = 2;

    /// <summary>Refreshes the claim of each entry <paramref name="consumer"/> still owns, and tells which ones it no longer owns and which ones Redis lost.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="consumer">The consumer that holds the entries.</param>
    /// <param name="held">Each entry held: its stream id and the epoch it was fetched under (empty when unknown).</param>
    /// <returns>The ids no longer this consumer's and the ids Redis lost.</returns>
    public static KeepAliveReply Run(IDatabase db, RedisStreamKeys keys, string consumer, ReadOnlySpan<(string StreamId, string Epoch)> held) =>
        KeepAliveReply.Read(db.ScriptEvaluate(DurableScripts.KeepAlive, Keys(keys), Arguments(consumer, held)));

    /// <summary>KEYS: stream, epoch.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream, keys.Epoch];

    /// <summary>ARGV: group, consumer, then per entry: stream id, the epoch it was fetched under.</summary>
    public static RedisValue[] Arguments(string consumer, ReadOnlySpan<(string StreamId, string Epoch)> held)
    {
        const int First = 2;
        var args = new RedisValue[First + (Stride * held.Length)];
        args[0] = RedisStreamKeys.Group;
        args[1] = consumer;
        for (int i = 0; i < held.Length; i++)
        {
            args[First + (Stride * i)] = held[i].StreamId;
            args[First + (Stride * i) + 1] = held[i].Epoch;
        }

        return args;
    }
}

/// <summary>What <c>keepAlive.lua</c> answers.</summary>
/// <param name="Lost">The ids this consumer no longer owns: another consumer took them, or they were settled elsewhere.</param>
/// <param name="Gone">The ids Redis lost (see <c>includes/vanished.lua</c>).</param>
internal readonly record struct KeepAliveReply(string[] Lost, string[] Gone)
{
    /// <summary>Reads the script's reply: <c>{ lost ids, gone ids }</c>.</summary>
    public static KeepAliveReply Read(RedisResult reply)
    {
        var parts = (RedisResult[])reply!;
        return new KeepAliveReply(Ids(parts[0]), Ids(parts[1]));
    }

    private static string[] Ids(RedisResult list) => [.. ((RedisResult[])list!).Select(static r => (string)r!)];
}
