using System.Globalization;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>keepAlive.lua called directly through <see cref="KeepAliveCall"/>, on a real redis-server.</summary>
public sealed class KeepAliveScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task KeepAlive_EntriesStillHeld_RefreshesTheirClaimsWithoutCountingADelivery()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string epoch = await PendingState.EpochAsync(db, keys);
        string e1 = await PendingState.AddAsync(db, keys);
        string e2 = await PendingState.AddAsync(db, keys);
        string other = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys, 2);
        await ScriptState.DeliverAsync(db, keys, 1, "c2");
        foreach (string id in new[] { e1, e2 })
        {
            await PendingState.MakeIdleAsync(db, keys, "c1", id);
        }

        await PendingState.MakeIdleAsync(db, keys, "c2", other);

        var reply = KeepAliveCall.Run(db, keys, "c1", [(e1, epoch), (e2, epoch)]);

        Assert.Empty(reply.Lost);
        Assert.Empty(reply.Gone);
        foreach (string id in new[] { e1, e2 })
        {
            var (consumer, deliveries, idle) = (await PendingState.PendingAsync(db, keys, id))!.Value;
            Assert.Equal(("c1", 1L), (consumer, deliveries));
            Assert.True(idle < PendingState.DeadIdleMs / 2, $"{id} still idle {idle} ms");
        }

        // Another consumer's entry is neither taken nor refreshed; nothing else changed.
        var others = (await PendingState.PendingAsync(db, keys, other))!.Value;
        Assert.Equal(("c2", 1L), (others.Consumer, others.Deliveries));
        Assert.True(others.IdleMs >= PendingState.DeadIdleMs, $"{other} refreshed");
        Assert.Equal([e1, e2, other], (await db.StreamRangeAsync(keys.Stream)).Select(e => (string)e.Id!));
        Assert.Equal(["epoch", "stream"], await PendingState.KeyNamesAsync(db, keys));
    }

    [Fact]
    public async Task KeepAlive_EntryAnotherConsumerTook_ReportsItLostAndLeavesItToThatConsumer()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string epoch = await PendingState.EpochAsync(db, keys);
        string id = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);
        await PendingState.MakeIdleAsync(db, keys, "c2", id);
        string before = await ScriptState.SnapshotAsync(db, keys);

        var reply = KeepAliveCall.Run(db, keys, "c1", [(id, epoch)]);

        Assert.Equal([id], reply.Lost);
        Assert.Empty(reply.Gone);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task KeepAlive_EntrySettledElsewhere_ReportsItLostWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string epoch = await PendingState.EpochAsync(db, keys);
        string id = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);
        await db.StreamAcknowledgeAsync(keys.Stream, RedisStreamKeys.Group, id);
        string before = await ScriptState.SnapshotAsync(db, keys);

        var reply = KeepAliveCall.Run(db, keys, "c1", [(id, epoch)]);

        Assert.Equal([id], reply.Lost);
        Assert.Empty(reply.Gone);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task KeepAlive_EntryRedisLost_ReportsItGoneWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string old = await PendingState.EpochAsync(db, keys);
        string id = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);

        // Redis lost its data, and another instance made the group again (with a new epoch) and got new work. The new
        // entry's id is set a millisecond after the lost one's: an id from '*' in the same millisecond as the first
        // add (a fast run) would be the lost entry's own id, found in the new stream, so not gone.
        await db.KeyDeleteAsync([keys.Stream, keys.Epoch]);
        CreateGroupCall.Run(db, keys, "c2");
        long lostMs = long.Parse(id[..id.IndexOf('-', StringComparison.Ordinal)], CultureInfo.InvariantCulture);
        await db.StreamAddAsync(keys.Stream, [new("p", "{}"), new("t", "1000")], messageId: $"{lostMs + 1}-0");
        string before = await ScriptState.SnapshotAsync(db, keys);

        var reply = KeepAliveCall.Run(db, keys, "c1", [(id, old)]);

        Assert.Empty(reply.Lost);
        Assert.Equal([id], reply.Gone);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task KeepAlive_HeldLostAndGoneTogether_AnswersEachInItsListInOrder()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string epoch = await PendingState.EpochAsync(db, keys);
        string held = await PendingState.AddAsync(db, keys);
        string taken = await PendingState.AddAsync(db, keys);
        string settled = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys, 3);
        await PendingState.MakeIdleAsync(db, keys, "c2", taken);
        await db.StreamAcknowledgeAsync(keys.Stream, RedisStreamKeys.Group, settled);

        // A held entry from an earlier epoch that Redis no longer has, listed after the others.
        var reply = KeepAliveCall.Run(db, keys, "c1", [(settled, epoch), ("1-1", "before"), (held, epoch), (taken, epoch)]);

        Assert.Equal([settled, taken], reply.Lost);
        Assert.Equal(["1-1"], reply.Gone);
        Assert.Equal("c1", (await PendingState.PendingAsync(db, keys, held))!.Value.Consumer);
    }

    [Fact]
    public async Task KeepAlive_IdWithoutItsEpoch_StillRefreshedAsHeld()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string id = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);
        await PendingState.MakeIdleAsync(db, keys, "c1", id);

        // An argument list one short (no epoch for the last entry), as no caller sends but a hand might.
        var reply = KeepAliveReply.Read(db.ScriptEvaluate(DurableScripts.KeepAlive, KeepAliveCall.Keys(keys), [RedisStreamKeys.Group, "c1", id]));

        Assert.Empty(reply.Lost);
        Assert.Empty(reply.Gone);
        Assert.True((await PendingState.PendingAsync(db, keys, id))!.Value.IdleMs < PendingState.DeadIdleMs / 2);
    }

    [Theory]
    [InlineData("-")]
    [InlineData("+")]
    [InlineData("(1-0")]
    [InlineData("0-0")]
    public async Task KeepAlive_RangeSyntaxRatherThanAnId_ReportedNotHeldWithoutWriting(string id)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string epoch = await PendingState.EpochAsync(db, keys);
        string held = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);
        await PendingState.MakeIdleAsync(db, keys, "c1", held);
        string before = await ScriptState.SnapshotAsync(db, keys);

        var reply = KeepAliveCall.Run(db, keys, "c1", [(id, epoch)]);

        Assert.Equal([id], reply.Lost.Concat(reply.Gone));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Theory]
    [InlineData("nope")]
    [InlineData("")]
    [InlineData("99999999999999999999999-0")]
    [InlineData("1-0|x")]
    [InlineData("{q}")]
    public async Task KeepAlive_MalformedId_FailsWithRedisErrorWithoutWriting(string id)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string epoch = await PendingState.EpochAsync(db, keys);
        string held = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);
        await PendingState.MakeIdleAsync(db, keys, "c1", held);
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.Throws<RedisServerException>(() => KeepAliveCall.Run(db, keys, "c1", [(id, epoch)]));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task KeepAlive_StreamKeyOfAnotherType_FailsWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");
        await db.StringSetAsync(keys.Stream, "not a stream");
        await db.StringSetAsync(keys.Epoch, "e");
        string before = await ScriptState.SnapshotAsync(db, keys);

        var error = Assert.Throws<RedisServerException>(() => KeepAliveCall.Run(db, keys, "c1", [("1-1", "e")]));

        Assert.Contains("WRONGTYPE", error.Message, StringComparison.Ordinal);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task KeepAlive_GroupGone_FailsWithNoGroupSoTheStoreMakesItAgain()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");
        string id = await PendingState.AddAsync(db, keys);

        var error = Assert.Throws<RedisServerException>(() => KeepAliveCall.Run(db, keys, "c1", [(id, "e")]));

        Assert.Contains("NOGROUP", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task KeepAlive_EpochKeyOfAnotherType_StillRefreshesHeldEntriesAndLeavesTheKey()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string epoch = await PendingState.EpochAsync(db, keys);
        string held = await PendingState.AddAsync(db, keys);
        string settled = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys, 2);
        await PendingState.MakeIdleAsync(db, keys, "c1", held);
        await db.StreamAcknowledgeAsync(keys.Stream, RedisStreamKeys.Group, settled);
        await db.KeyDeleteAsync(keys.Epoch);
        await db.HashSetAsync(keys.Epoch, "f", "v");

        var reply = KeepAliveCall.Run(db, keys, "c1", [(held, epoch), (settled, epoch)]);

        Assert.Equal([settled], reply.Lost);
        Assert.Empty(reply.Gone);
        Assert.True((await PendingState.PendingAsync(db, keys, held))!.Value.IdleMs < PendingState.DeadIdleMs / 2);
        Assert.Equal([new HashEntry("f", "v")], await db.HashGetAllAsync(keys.Epoch));
    }

    [Theory]
    [InlineData("nope")]
    [InlineData("")]
    [InlineData("99999999999999999999999-0")]
    public async Task KeepAlive_MalformedIdAfterAHeldOne_FailsWithoutRefreshingAny(string id)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string epoch = await PendingState.EpochAsync(db, keys);
        string held = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);
        await PendingState.MakeIdleAsync(db, keys, "c1", held);
        string before = await ScriptState.SnapshotAsync(db, keys);

        // Every id is read before the first claim is refreshed: an error leaves no part of the batch applied.
        Assert.Throws<RedisServerException>(() => KeepAliveCall.Run(db, keys, "c1", [(held, epoch), (id, epoch)]));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }
}
