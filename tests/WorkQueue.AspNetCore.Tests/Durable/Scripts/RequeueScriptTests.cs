using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>requeue.lua called directly through <see cref="RequeueCall"/> with crafted keys and arguments, on a real redis-server.</summary>
public sealed class RequeueScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task Requeue_QueueAtCapacity_RefusedWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await db.StreamAddAsync(keys.Stream, [new("p", "{}"), new("t", "1000")]);
        await db.StreamAddAsync(keys.Stream, [new("p", "{}"), new("t", "1000")]);
        string dead = await DeadLetterAsync(db, keys, "1-1");
        string before = await ScriptState.SnapshotAsync(db, keys);

        // Room = capacity - (pending + undelivered) - delayed: 2 - 2 - 0.
        Assert.Equal(new DeadLetterRequeue(null, QueueFull: true), Requeue(db, keys, dead, capacity: 2));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));

        // One delivered and still running counts; one more of capacity makes room for exactly one.
        await ScriptState.DeliverAsync(db, keys);
        var requeued = Requeue(db, keys, dead, capacity: 3);
        Assert.False(requeued.QueueFull);
        Assert.Matches(@"^\d+-\d+$", requeued.NewId);
        Assert.Equal(3, await db.StreamLengthAsync(keys.Stream));
        Assert.Equal(0, await db.StreamLengthAsync(keys.Dead));
        Assert.Equal(requeued.NewId, (string?)await db.StringGetAsync(keys.JobLocation("1-1")));
    }

    [Fact]
    public async Task Requeue_DeadLetter_NewEntryOfTheSameJobAtAttemptOneWithItsKeyAndRecord()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string dead = (string)(await db.StreamAddAsync(keys.Dead, [new("j", "1-1"), new("p", "{\"n\":1}"), new("a", "3"), new("t", "1000"), new("e", "boom"), new("r", "failed"), new("f", "1002"), new("k", "key|\u0001{x}")]))!;
        await db.HashSetAsync(keys.EndedRecords, "1-1", "D\u001f\u001f1002\u001f3\u001f1000\u001fc1\u001f1001\u001fboom");
        await db.SortedSetAddAsync(keys.DeadLettered, "1-1", 1002);

        var requeued = Requeue(db, keys, dead, capacity: 10);

        // The entry: the payload, the job id and the key kept; attempt 1 (no field a); the key names the new entry.
        string id = requeued.NewId!;
        var entry = Assert.Single(await db.StreamRangeAsync(keys.Stream));
        Assert.Equal(id, (string?)entry.Id);
        Assert.Equal(("{\"n\":1}", "1-1", "key|\u0001{x}", true), ((string?)entry["p"], (string?)entry["j"], (string?)entry["k"], entry["a"].IsNull));
        Assert.Equal("1-1|" + id, (string?)await db.StringGetAsync(keys.IdempotencyKey("key|\u0001{x}")));

        // The job lives again: out of the dead letters and the dead-lettered list, its record live again, queued.
        Assert.Equal(0, await db.StreamLengthAsync(keys.Dead));
        Assert.Equal(0, await db.SortedSetLengthAsync(keys.DeadLettered));
        Assert.False(await db.HashExistsAsync(keys.EndedRecords, "1-1"));
        Assert.Equal("q\u001f\u001f1002\u001f3\u001f1000\u001fc1\u001f1001\u001fboom", (string?)await db.StringGetAsync(keys.JobRecord("1-1")));
        Assert.Equal(id, (string?)await db.StringGetAsync(keys.JobLocation("1-1")));
    }

    [Fact]
    public async Task Requeue_DelayedJobsCountAndSettledEntriesDoNot()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);

        // Two settled entries waiting for the trim (delivered, acknowledged): not unfinished.
        await db.StreamAddAsync(keys.Stream, [new("p", "{}"), new("t", "1000")]);
        await db.StreamAddAsync(keys.Stream, [new("p", "{}"), new("t", "1000")]);
        var delivered = await ScriptState.DeliverAsync(db, keys, 2);
        await db.StreamAcknowledgeAsync(keys.Stream, RedisStreamKeys.Group, [.. delivered.Select(d => (RedisValue)d)]);

        // Two waiting in the delayed set (a retry, a scheduled job): unfinished.
        await db.SortedSetAddAsync(keys.Delayed, "1-1|2|1000|{}", 5_000_000_000_000);
        await db.SortedSetAddAsync(keys.Delayed, "s5-1|1|1000|{}", 5_000_000_000_000);
        string first = await DeadLetterAsync(db, keys, "7-1");
        string second = await DeadLetterAsync(db, keys, "7-2");

        Assert.Matches(@"^\d+-\d+$", Requeue(db, keys, first, capacity: 3).NewId);
        Assert.True(Requeue(db, keys, second, capacity: 3).QueueFull);
        Assert.Equal([second], (await db.StreamRangeAsync(keys.Dead)).Select(e => (string)e.Id!));
    }

    [Fact]
    public async Task Requeue_UnknownDeadLetterInAFullQueue_AnswersNotFoundRatherThanFull()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await db.StreamAddAsync(keys.Stream, [new("p", "{}"), new("t", "1000")]);

        Assert.True(Requeue(db, keys, "1-0", capacity: 1).NotFound);
    }

    [Theory]
    [InlineData("nope")]
    [InlineData("-")]
    [InlineData("+")]
    [InlineData("1")]
    [InlineData("")]
    [InlineData("99999999999999999999999-0")]
    [InlineData("1-0|x")]
    public async Task Requeue_MalformedOrHostileId_AnswersNotFoundWithoutWriting(string id)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await DeadLetterAsync(db, keys, "1-1");
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.True(Requeue(db, keys, id, capacity: 100).NotFound);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task Requeue_DeadLettersKeyOfAnotherType_FailsWithRedisErrorRatherThanNotFound()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await db.StringSetAsync(keys.Dead, "not a stream");

        // A broken store is an error for the caller (the admin route's 500), never "no such dead letter".
        var error = Assert.Throws<RedisServerException>(() => Requeue(db, keys, "1-0", capacity: 100));
        Assert.Contains("WRONGTYPE", error.Message, StringComparison.Ordinal);
    }

    private static async Task<string> DeadLetterAsync(IDatabase db, RedisStreamKeys keys, string job) =>
        (string)(await db.StreamAddAsync(keys.Dead, [new("j", job), new("p", "{}"), new("a", "3"), new("t", "1000"), new("e", "boom"), new("r", "failed"), new("f", "1002")]))!;

    private static DeadLetterRequeue Requeue(IDatabase db, RedisStreamKeys keys, string id, int capacity) => RequeueCall.Run(db, keys, id, capacity);
}
