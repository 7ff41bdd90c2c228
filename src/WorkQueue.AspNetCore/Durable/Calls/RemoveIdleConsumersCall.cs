using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/removeIdleConsumers.lua</c>: its KEYS and ARGV in the order the script's header gives them, and
/// its reply read, in one place. The store (<c>RedisStreamStore.Fetching.cs</c>, <c>RemoveIdleConsumers</c>) calls it.
/// </summary>
internal static class RemoveIdleConsumersCall
{
    /// <summary>Removes the group's other consumers that hold no pending entries and have been idle longer than <paramref name="minIdleMs"/>.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="consumer">The consumer that asks (never removed).</param>
    /// <param name="minIdleMs">How long a consumer must have been idle to be removed.</param>
    /// <returns>The names of the consumers removed.</returns>
    public static string[] Run(IDatabase db, RedisStreamKeys keys, string consumer, long minIdleMs) =>
        [.. ((RedisResult[])db.ScriptEvaluate(DurableScripts.RemoveIdleConsumers, Keys(keys), Arguments(consumer, minIdleMs))!).Select(static r => (string)r!)];

    /// <summary>KEYS: stream.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream];

    /// <summary>ARGV: group, this consumer, min idle ms.</summary>
    public static RedisValue[] Arguments(string consumer, long minIdleMs) =>
    [
        RedisStreamKeys.Group,
        consumer,
        minIdleMs,
    ];
}
