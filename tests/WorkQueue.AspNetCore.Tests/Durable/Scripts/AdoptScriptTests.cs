using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>adopt.lua called directly through <see cref="AdoptCall"/>, on a real redis-server.</summary>
public sealed class AdoptScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task Adopt_EntriesPendingHere_ReturnsThemAsReadWithTheirDeliveriesAndWritesNothing()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string epoch = await PendingState.EpochAsync(db, keys);
        string first = await PendingState.AddAsync(db, keys, "{\"n\":1}", "key-1");
        string retry = (string)(await db.StreamAddAsync(keys.Stream, [new("p", "{\"n\":2}"), new("a", "2"), new("t", "1000"), new("j", "1-1")]))!;
        await ScriptState.DeliverAsync(db, keys, 2);
        await PendingState.MakeIdleAsync(db, keys, "c1", retry, idleMs: 0, deliveries: 3);
        string before = await ScriptState.SnapshotAsync(db, keys);

        var reply = AdoptCall.Run(db, keys, "c1", [first, retry]);

        Assert.Equal(epoch, reply.Epoch);
        Assert.Equal(
            [(first, first, "{\"n\":1}", 1, 1000L, "key-1", 1L), (retry, "1-1", "{\"n\":2}", 2, 1000L, null, 3L)],
            reply.Found.Select(static e => (e.StreamId, e.JobId, e.Payload, e.Attempt, e.EnqueuedAtMs, e.IdempotencyKey, e.Deliveries)));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task Adopt_EntryAnotherConsumerHolds_LeftToIt()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string id = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys, 1, "c2");
        string before = await ScriptState.SnapshotAsync(db, keys);

        var reply = AdoptCall.Run(db, keys, "c1", [id]);

        Assert.Empty(reply.Found);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task Adopt_EntrySettledOrNeverDelivered_SkippedWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string settled = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);
        await db.StreamAcknowledgeAsync(keys.Stream, RedisStreamKeys.Group, settled);
        string queued = await PendingState.AddAsync(db, keys);
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.Empty(AdoptCall.Run(db, keys, "c1", [settled, queued, "1-1"]).Found);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task Adopt_EntryDeletedWhilePendingHere_AcknowledgedAndNotReturned()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string deleted = await PendingState.AddAsync(db, keys);
        string kept = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys, 2);
        await db.StreamDeleteAsync(keys.Stream, [deleted]);

        var reply = AdoptCall.Run(db, keys, "c1", [deleted, kept]);

        Assert.Equal([kept], reply.Found.Select(static e => e.StreamId));
        Assert.Null(await PendingState.PendingAsync(db, keys, deleted));
        Assert.Equal("c1", (await PendingState.PendingAsync(db, keys, kept))!.Value.Consumer);
        Assert.Equal(1, (await db.StreamPendingAsync(keys.Stream, RedisStreamKeys.Group)).PendingMessageCount);
    }

    [Fact]
    public async Task Adopt_EpochGone_WritesANewOneAndHandsItBack()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string old = await PendingState.EpochAsync(db, keys);
        string id = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);
        await db.KeyDeleteAsync(keys.Epoch);

        var reply = AdoptCall.Run(db, keys, "c1", [id]);

        Assert.NotEqual(old, reply.Epoch);
        Assert.EndsWith("@c1", reply.Epoch, StringComparison.Ordinal);
        Assert.Equal(reply.Epoch, await PendingState.EpochAsync(db, keys));
        Assert.Equal([id], reply.Found.Select(static e => e.StreamId));
    }

    [Fact]
    public async Task Adopt_NoIds_AnswersTheEpochOnly()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);

        var reply = AdoptCall.Run(db, keys, "c1", []);

        Assert.Empty(reply.Found);
        Assert.Equal(await PendingState.EpochAsync(db, keys), reply.Epoch);
    }

    [Theory]
    [InlineData("nope")]
    [InlineData("")]
    [InlineData("99999999999999999999999-0")]
    [InlineData("1-0|x")]
    public async Task Adopt_MalformedId_FailsWithRedisErrorWithoutWriting(string id)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.Throws<RedisServerException>(() => AdoptCall.Run(db, keys, "c1", [id]));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task Adopt_StreamKeyOfAnotherType_FailsWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");
        await db.StringSetAsync(keys.Stream, "not a stream");
        string before = await ScriptState.SnapshotAsync(db, keys);

        var error = Assert.Throws<RedisServerException>(() => AdoptCall.Run(db, keys, "c1", ["1-1"]));

        Assert.Contains("WRONGTYPE", error.Message, StringComparison.Ordinal);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Theory]
    [InlineData("nope")]
    [InlineData("")]
    [InlineData("99999999999999999999999-0")]
    public async Task Adopt_MalformedIdAfterADeletedOne_FailsWithoutAcknowledgingIt(string id)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string deleted = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);
        await db.StreamDeleteAsync(keys.Stream, [deleted]);
        string before = await ScriptState.SnapshotAsync(db, keys);

        // Every id is read before the first acknowledgement: an error leaves no part of the batch applied.
        Assert.Throws<RedisServerException>(() => AdoptCall.Run(db, keys, "c1", [deleted, id]));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }
}
