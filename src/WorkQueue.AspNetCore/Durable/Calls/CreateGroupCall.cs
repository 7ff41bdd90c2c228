using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/createGroup.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its
/// reply read, in one place. The store (<c>RedisStreamStore.cs</c>, <c>EnsureGroup</c>) and the model test call it alike.
/// </summary>
internal static class CreateGroupCall
{
    /// <summary>Creates the queue's group (and stream) unless it exists, and its epoch unless it exists, in one step.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="consumer">The consumer that asks (named in a new epoch).</param>
    /// <returns>The queue's epoch; empty when Redis refused to read or write it (see <c>includes/epoch.lua</c>).</returns>
    public static string Run(IDatabase db, RedisStreamKeys keys, string consumer) =>
        (string?)db.ScriptEvaluate(DurableScripts.CreateGroup, Keys(keys), Arguments(consumer)) ?? string.Empty;

    /// <summary>KEYS: stream, epoch.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream, keys.Epoch];

    /// <summary>ARGV: group, consumer.</summary>
    public static RedisValue[] Arguments(string consumer) =>
    [
        RedisStreamKeys.Group,
        consumer,
    ];
}
