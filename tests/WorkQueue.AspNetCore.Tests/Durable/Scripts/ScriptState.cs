using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>
/// A queue's keys in a state written by hand, as the scripts leave it, for the direct script tests: each test gets a new
/// prefix, so tests sharing a redis-server never see each other's keys.
/// </summary>
internal static class ScriptState
{
    public const string Consumer = "c1";

    /// <summary>The queue's stream and group (and epoch), as a consumer's start leaves them.</summary>
    public static RedisStreamKeys NewQueue(IDatabase db, string queue = "q")
    {
        var keys = new RedisStreamKeys(TestSupport.DurableTestHost.NewPrefix(), queue);
        db.ScriptEvaluate(DurableScripts.CreateGroup, [keys.Stream, keys.Epoch], [RedisStreamKeys.Group, Consumer]);
        return keys;
    }

    /// <summary>Delivers the stream's next entries to <paramref name="consumer"/> (pending there).</summary>
    public static async Task<string[]> DeliverAsync(IDatabase db, RedisStreamKeys keys, int count = 1, string consumer = Consumer)
    {
        var read = await db.StreamReadGroupAsync(keys.Stream, RedisStreamKeys.Group, consumer, ">", count);
        return [.. read.Select(e => (string)e.Id!)];
    }

    /// <summary>
    /// A keyed job E1 whose first attempt failed and whose retry came due: E1 delivered and acknowledged (settled,
    /// waiting for the trim), the retry's entry E2 (attempt 2, <c>j</c> = E1, the key), <c>at:E1</c> = E2, the key
    /// naming E1 at E2, and the job's live record with the failed attempt, as scheduleRetry.lua and the round's
    /// promotion write them.
    /// </summary>
    public static async Task<(string E1, string E2)> RetriedAsync(IDatabase db, RedisStreamKeys keys, string key)
    {
        string e1 = (string)(await db.StreamAddAsync(keys.Stream, [new("p", "{\"n\":1}"), new("t", "1000"), new("k", key)]))!;
        Assert.Equal([e1], await DeliverAsync(db, keys));
        await db.StreamAcknowledgeAsync(keys.Stream, RedisStreamKeys.Group, e1);
        await db.StringSetAsync(keys.JobRecord(e1), "r\u001f\u001f\u001f1\u001f1000\u001f\u001f\u001f\u001e1\u001fc1\u001f1001\u001f1002\u001fR\u001fboom");
        string e2 = (string)(await db.StreamAddAsync(keys.Stream, [new("p", "{\"n\":1}"), new("a", "2"), new("t", "1000"), new("j", e1), new("k", key)]))!;
        await db.StringSetAsync(keys.JobLocation(e1), e2);
        await db.StringSetAsync(keys.IdempotencyKey(key), e1 + "|" + e2);
        return (e1, e2);
    }

    /// <summary>Every key of the queue with its type and contents, to show that a call wrote nothing.</summary>
    public static async Task<string> SnapshotAsync(IDatabase db, RedisStreamKeys keys)
    {
        string root = ((string)keys.Stream!)[..^"stream".Length];
        var names = ((RedisResult[])(await db.ExecuteAsync("KEYS", root.Replace("{", "\\{").Replace("}", "\\}") + "*"))!).Select(k => (string)k!).Order(StringComparer.Ordinal);
        var lines = new List<string>();
        foreach (string name in names)
        {
            var dump = await db.KeyDumpAsync(name);
            lines.Add(name + " " + Convert.ToHexString(dump ?? []));
        }

        return string.Join("\n", lines);
    }
}
