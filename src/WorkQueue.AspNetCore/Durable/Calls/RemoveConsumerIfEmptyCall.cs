using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/removeConsumerIfEmpty.lua</c>: its KEYS and ARGV in the order the script's header gives them, and
/// its reply read, in one place. The store (<c>RedisStreamStore.cs</c>, <c>Leave</c>) calls it.
/// </summary>
internal static class RemoveConsumerIfEmptyCall
{
    /// <summary>Removes <paramref name="consumer"/> from the group if it holds no pending entries.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="consumer">The consumer that leaves.</param>
    /// <returns><see langword="true"/> when removed; <see langword="false"/> when it still holds entries (kept, so they are not dropped).</returns>
    public static bool Run(IDatabase db, RedisStreamKeys keys, string consumer) =>
        (long)db.ScriptEvaluate(DurableScripts.RemoveConsumerIfEmpty, Keys(keys), Arguments(consumer)) == 1;

    /// <summary>KEYS: stream.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream];

    /// <summary>ARGV: group, consumer.</summary>
    public static RedisValue[] Arguments(string consumer) =>
    [
        RedisStreamKeys.Group,
        consumer,
    ];
}
