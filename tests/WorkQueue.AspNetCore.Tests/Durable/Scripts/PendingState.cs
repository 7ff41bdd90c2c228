using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>
/// The group's side of a queue written by hand for the direct tests of the consumer scripts (keepAlive, adopt,
/// reclaim, the consumer removals): entries, who holds them and since when, and what the group knows of its consumers.
/// </summary>
internal static class PendingState
{
    /// <summary>What a consumer's entries are made idle for (<c>XCLAIM ... IDLE</c>), standing for the time it has been dead.</summary>
    public const long DeadIdleMs = 1_000_000_000;

    /// <summary>Adds an entry as the round enqueues a first attempt: payload and enqueue time, and the key when it has one.</summary>
    public static async Task<string> AddAsync(IDatabase db, RedisStreamKeys keys, string payload = "{}", string? key = null)
    {
        NameValueEntry[] fields = key is null
            ? [new("p", payload), new("t", "1000")]
            : [new("p", payload), new("t", "1000"), new("k", key)];
        return (string)(await db.StreamAddAsync(keys.Stream, fields))!;
    }

    /// <summary>
    /// Makes <paramref name="id"/> pending for <paramref name="consumer"/>, idle for <paramref name="idleMs"/>, without
    /// counting a delivery (<c>JUSTID</c>), or with <paramref name="deliveries"/> as its count.
    /// </summary>
    public static Task MakeIdleAsync(IDatabase db, RedisStreamKeys keys, string consumer, string id, long idleMs = DeadIdleMs, long? deliveries = null) =>
        deliveries is { } count
            ? db.ExecuteAsync("XCLAIM", (string)keys.Stream!, RedisStreamKeys.Group, consumer, "0", id, "IDLE", idleMs, "RETRYCOUNT", count, "JUSTID")
            : db.ExecuteAsync("XCLAIM", (string)keys.Stream!, RedisStreamKeys.Group, consumer, "0", id, "IDLE", idleMs, "JUSTID");

    /// <summary>Who holds <paramref name="id"/>, how often it was delivered and how long it has been idle; <see langword="null"/> when pending for nobody.</summary>
    public static async Task<(string Consumer, long Deliveries, long IdleMs)?> PendingAsync(IDatabase db, RedisStreamKeys keys, string id)
    {
        var info = await db.StreamPendingMessagesAsync(keys.Stream, RedisStreamKeys.Group, 1, RedisValue.Null, id, id);
        return info.Length == 0 ? null : ((string)info[0].ConsumerName!, info[0].DeliveryCount, info[0].IdleTimeInMilliseconds);
    }

    /// <summary>The group's consumers, by name, with how many entries each holds.</summary>
    public static async Task<(string Name, long Pending)[]> ConsumersAsync(IDatabase db, RedisStreamKeys keys) =>
        [.. (await db.StreamConsumerInfoAsync(keys.Stream, RedisStreamKeys.Group)).Select(static c => ((string)c.Name!, (long)c.PendingMessageCount)).OrderBy(static c => c.Item1, StringComparer.Ordinal)];

    /// <summary>Adds a consumer to the group that holds nothing (<c>XGROUP CREATECONSUMER</c>).</summary>
    public static Task AddConsumerAsync(IDatabase db, RedisStreamKeys keys, string consumer) =>
        db.ExecuteAsync("XGROUP", "CREATECONSUMER", (string)keys.Stream!, RedisStreamKeys.Group, consumer);

    /// <summary>The names of the queue's keys, sorted.</summary>
    public static async Task<string[]> KeyNamesAsync(IDatabase db, RedisStreamKeys keys)
    {
        string root = ((string)keys.Stream!)[..^"stream".Length];
        var names = (RedisResult[])(await db.ExecuteAsync("KEYS", root.Replace("{", "\\{").Replace("}", "\\}") + "*"))!;
        return [.. names.Select(static k => ((string)k!)[(((string)k!).IndexOf('}') + 2)..]).Order(StringComparer.Ordinal)];
    }

    /// <summary>The queue's epoch, as createGroup.lua wrote it.</summary>
    public static async Task<string> EpochAsync(IDatabase db, RedisStreamKeys keys) => (string)(await db.StringGetAsync(keys.Epoch))!;
}
