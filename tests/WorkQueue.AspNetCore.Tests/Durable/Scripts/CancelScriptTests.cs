using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>cancel.lua called directly through <see cref="CancelCall"/> with crafted keys and arguments, on a real redis-server.</summary>
public sealed class CancelScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const long Retention = 60_000;

    [Fact]
    public async Task Cancel_RetriedJobByItsCurrentStreamId_EndsTheJobUnderItsOwnIdAndFreesItsKey()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var (e1, e2) = await ScriptState.RetriedAsync(db, keys, "key-1");

        var reply = Cancel(db, keys, e2);

        // Answered for the job (E1), whose record says Canceled with its failed attempt; nothing left under either id.
        Assert.Equal(new CancelReply(1, null, e1), reply);
        Assert.Equal(JobCancelOutcome.Canceled, reply.Outcome);
        string record = (string)(await db.HashGetAsync(keys.EndedRecords, e1))!;
        Assert.StartsWith("C\u001f1\u001f", record, StringComparison.Ordinal);
        Assert.EndsWith("\u001e1\u001fc1\u001f1001\u001f1002\u001fR\u001fboom", record, StringComparison.Ordinal);
        Assert.Equal(e1, (string?)(await db.SortedSetRangeByRankAsync(keys.Canceled)).Single());
        Assert.False(await db.HashExistsAsync(keys.EndedRecords, e2));
        foreach (var name in new[] { keys.JobLocation(e1), keys.JobRecord(e1), keys.JobLocation(e2), keys.JobRecord(e2), keys.IdempotencyKey("key-1") })
        {
            Assert.False(await db.KeyExistsAsync(name), $"{name} is left");
        }

        // E2 is gone from the stream (E1, settled, waits for the trim) and the group lost no lag.
        Assert.Equal([e1], (await db.StreamRangeAsync(keys.Stream)).Select(e => (string)e.Id!));
        Assert.Equal(new CancelReply(3, null, e1), Cancel(db, keys, e1));
    }

    [Fact]
    public async Task Cancel_RetriedJobRunningByItsCurrentStreamId_MarksTheJobsRecordAndPublishesTheEntry()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var (e1, e2) = await ScriptState.RetriedAsync(db, keys, "key-2");
        Assert.Equal([e2], await ScriptState.DeliverAsync(db, keys));
        var published = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        await client.GetSubscriber().SubscribeAsync(keys.Cancel, (_, m) => published.TrySetResult((string)m!));

        var reply = Cancel(db, keys, e2);

        // The consumer settles the entry under the job's id (its field j): the cancel flag must be in that record.
        Assert.Equal(new CancelReply(2, ScriptState.Consumer, e1), reply);
        Assert.Equal(JobCancelOutcome.CancelRequested, reply.Outcome);
        Assert.Equal(e2, await published.Task.WaitAsync(TimeSpan.FromSeconds(10)));
        string live = (string)(await db.StringGetAsync(keys.JobRecord(e1)))!;
        Assert.StartsWith("r\u001f1\u001f", live, StringComparison.Ordinal);
        Assert.Contains("\u001fboom", live, StringComparison.Ordinal);
        Assert.False(await db.KeyExistsAsync(keys.JobRecord(e2)));
        Assert.Equal(e1 + "|" + e2, (string?)await db.StringGetAsync(keys.IdempotencyKey("key-2")));
    }

    [Fact]
    public async Task Cancel_QueuedFirstAttempt_EndsItAndFreesItsKey()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string id = (string)(await db.StreamAddAsync(keys.Stream, [new("p", "{}"), new("t", "1000"), new("k", "k")]))!;
        await db.StringSetAsync(keys.IdempotencyKey("k"), id + "|" + id);

        Assert.Equal(new CancelReply(1, null, id), Cancel(db, keys, id));
        Assert.Equal(0, await db.StreamLengthAsync(keys.Stream));
        Assert.False(await db.KeyExistsAsync(keys.IdempotencyKey("k")));
        Assert.StartsWith("C\u001f1\u001f", (string?)await db.HashGetAsync(keys.EndedRecords, id), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Cancel_ScheduledOnlyOfAQueuedJob_AnswersUnknownWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string id = (string)(await db.StreamAddAsync(keys.Stream, [new("p", "{}"), new("t", "1000")]))!;
        await db.SortedSetAddAsync(keys.Delayed, "s5-1|1|1000|{}", 5_000_000_000_000);
        await db.HashSetAsync(keys.Scheduled, "s5-1", "s5-1|1|1000|{}");
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.Equal(new CancelReply(0, null, null), Cancel(db, keys, id, scheduledOnly: true));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));

        // The scheduled job itself is cancelled: out of the delayed set and the scheduled hash, its record Canceled.
        Assert.Equal(new CancelReply(1, null, "s5-1"), Cancel(db, keys, "s5-1", scheduledOnly: true));
        Assert.Equal(0, await db.SortedSetLengthAsync(keys.Delayed));
        Assert.False(await db.HashExistsAsync(keys.Scheduled, "s5-1"));
        Assert.StartsWith("C\u001f1\u001f", (string?)await db.HashGetAsync(keys.EndedRecords, "s5-1"), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("99999999999999999999999-0")]
    [InlineData("1-99999999999999999999999")]
    [InlineData("nope")]
    [InlineData("s1-1")]
    [InlineData("")]
    [InlineData("stream")]
    [InlineData("key:k")]
    [InlineData("@x")]
    [InlineData("1-1|z5")]
    public async Task Cancel_UnknownOrHostileId_AnswersUnknownWithoutWriting(string id)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await ScriptState.RetriedAsync(db, keys, "k");
        await db.StreamAddAsync(keys.Stream, [new("p", "{}"), new("t", "1000")]);
        string before = await ScriptState.SnapshotAsync(db, keys);

        var reply = Cancel(db, keys, id);

        Assert.Equal(new CancelReply(0, null, null), reply);
        Assert.Equal(JobCancelOutcome.NotFound, reply.Outcome);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Theory]
    [InlineData("not-an-id")]
    [InlineData("99999999999999999999999-0")]
    [InlineData("z")]
    [InlineData("zNaN")]
    [InlineData("done")]
    public async Task Cancel_LocationSetByHandToNonsense_AnswersUnknownWithoutWriting(string where)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await db.StringSetAsync(keys.JobLocation("1-1"), where);
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.Equal(new CancelReply(0, null, null), Cancel(db, keys, "1-1"));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    private static CancelReply Cancel(IDatabase db, RedisStreamKeys keys, string id, bool scheduledOnly = false) =>
        CancelCall.Run(db, keys, id, Retention, scheduledOnly);
}
