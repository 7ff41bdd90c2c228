using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>
/// Entries a consumer holds, written by hand as the round and the settle scripts leave them, for the direct tests of
/// the settle scripts (scheduleRetry.lua, deadLetter.lua, settleCanceled.lua, release.lua), and what those tests read back.
/// </summary>
internal static class SettleState
{
    public const string Payload = "{\"n\":1}";

    /// <summary>A first attempt (enqueued at 1000, its key naming it) delivered to <paramref name="consumer"/>, started at 1001.</summary>
    public static async Task<SettledEntry> HeldAsync(IDatabase db, RedisStreamKeys keys, string? key = null, string payload = Payload, string consumer = ScriptState.Consumer)
    {
        NameValueEntry[] fields = key is null ? [new("p", payload), new("t", "1000")] : [new("p", payload), new("t", "1000"), new("k", key)];
        string id = (string)(await db.StreamAddAsync(keys.Stream, fields))!;
        Assert.Equal([id], await ScriptState.DeliverAsync(db, keys, consumer: consumer));
        if (key is not null)
        {
            await db.StringSetAsync(keys.IdempotencyKey(key), id + "|" + id);
        }

        return new SettledEntry(id, id, payload, 1, 1000, key, await EpochAsync(db, keys), Vanished: false, CancelRequested: false, StartedAtMs: 1001);
    }

    /// <summary>
    /// The second attempt E2 of a keyed job E1 (see <see cref="ScriptState.RetriedAsync"/>: its record holds the first
    /// attempt, failed with <c>boom</c>) delivered to <paramref name="consumer"/>, started at 1003.
    /// </summary>
    public static async Task<SettledEntry> RetriedHeldAsync(IDatabase db, RedisStreamKeys keys, string key, string consumer = ScriptState.Consumer)
    {
        var (e1, e2) = await ScriptState.RetriedAsync(db, keys, key);
        Assert.Equal([e2], await ScriptState.DeliverAsync(db, keys, consumer: consumer));
        return new SettledEntry(e2, e1, Payload, 2, 1000, key, await EpochAsync(db, keys), Vanished: false, CancelRequested: false, StartedAtMs: 1003);
    }

    /// <summary>
    /// A held entry that Redis lost, as a restart without persistence loses it: every key of the queue is gone and the
    /// group was made again (by another consumer), with a new epoch.
    /// </summary>
    public static async Task<SettledEntry> LostAsync(IDatabase db, RedisStreamKeys keys, string? key = null)
    {
        var held = await HeldAsync(db, keys, key);
        string root = ((string)keys.Stream!)[..^"stream".Length];
        await db.KeyDeleteAsync([.. (await KeyNamesAsync(db, keys)).Select(n => (RedisKey)(root + n))]);
        db.ScriptEvaluate(DurableScripts.CreateGroup, [keys.Stream, keys.Epoch], [RedisStreamKeys.Group, "c2"]);
        Assert.NotEqual(held.Epoch, await EpochAsync(db, keys));
        return held;
    }

    public static async Task<string> EpochAsync(IDatabase db, RedisStreamKeys keys) => (string)(await db.StringGetAsync(keys.Epoch))!;

    /// <summary>The names of the queue's keys that exist, after the queue's root (<c>stream</c>, <c>job:1-0</c>...), in order.</summary>
    public static async Task<string[]> KeyNamesAsync(IDatabase db, RedisStreamKeys keys)
    {
        string root = ((string)keys.Stream!)[..^"stream".Length];
        var names = (RedisResult[])(await db.ExecuteAsync("KEYS", root.Replace("{", "\\{").Replace("}", "\\}") + "*"))!;
        return [.. names.Select(n => ((string)n!)[root.Length..]).Order(StringComparer.Ordinal)];
    }

    /// <summary>The stream's entries as <c>id f1=v1 f2=v2</c>, fields in their order.</summary>
    public static async Task<string[]> EntriesAsync(IDatabase db, RedisKey stream) =>
        [.. (await db.StreamRangeAsync(stream)).Select(e => e.Id + " " + string.Join(" ", e.Values.Select(v => v.Name + "=" + v.Value)))];

    /// <summary>How many entries of the group are pending, for any consumer.</summary>
    public static async Task<long> PendingAsync(IDatabase db, RedisStreamKeys keys) =>
        (await db.StreamPendingAsync(keys.Stream, RedisStreamKeys.Group)).PendingMessageCount;

    /// <summary>A record's header fields (state, cancel, ended at, attempt, enqueued at, consumer, started at, error) and its attempts' fields.</summary>
    public static (string[] Header, string[][] Attempts) ReadRecord(string record)
    {
        string[] parts = record.Split(RecordText.AttemptSeparator);
        return (parts[0].Split(RecordText.FieldSeparator), [.. parts.Skip(1).Select(p => p.Split(RecordText.FieldSeparator))]);
    }
}
