using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>removeConsumerIfEmpty.lua called directly through <see cref="RemoveConsumerIfEmptyCall"/>, on a real redis-server.</summary>
public sealed class RemoveConsumerIfEmptyScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task RemoveConsumerIfEmpty_HoldsNothing_RemovedAndOthersKeptWithTheirEntries()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string settled = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);
        await db.StreamAcknowledgeAsync(keys.Stream, RedisStreamKeys.Group, settled);
        string held = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys, 1, "c2");

        Assert.True(RemoveConsumerIfEmptyCall.Run(db, keys, "c1"));

        Assert.Equal([("c2", 1L)], await PendingState.ConsumersAsync(db, keys));
        Assert.Equal("c2", (await PendingState.PendingAsync(db, keys, held))!.Value.Consumer);
        Assert.Equal([settled, held], (await db.StreamRangeAsync(keys.Stream)).Select(static e => (string)e.Id!));
    }

    [Fact]
    public async Task RemoveConsumerIfEmpty_HoldsEntries_KeptWithThemAndNothingWritten()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.False(RemoveConsumerIfEmptyCall.Run(db, keys, "c1"));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Theory]
    [InlineData("")]
    [InlineData("c1 ")]
    [InlineData("C1")]
    [InlineData("{c1}")]
    [InlineData("c1|x")]
    [InlineData("*")]
    [InlineData("\u0001\u001f")]
    public async Task RemoveConsumerIfEmpty_NameOfNoConsumer_LeavesTheOneHoldingEntriesAndWritesNothing(string name)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);
        string before = await ScriptState.SnapshotAsync(db, keys);

        // No consumer of that name holds anything, so it answers removed: there is none by that name afterwards.
        Assert.True(RemoveConsumerIfEmptyCall.Run(db, keys, name));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
        Assert.Equal([("c1", 1L)], await PendingState.ConsumersAsync(db, keys));
    }

    [Fact]
    public async Task RemoveConsumerIfEmpty_StreamKeyOfAnotherType_FailsWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");
        await db.StringSetAsync(keys.Stream, "not a stream");
        string before = await ScriptState.SnapshotAsync(db, keys);

        var error = Assert.Throws<RedisServerException>(() => RemoveConsumerIfEmptyCall.Run(db, keys, "c1"));

        Assert.Contains("WRONGTYPE", error.Message, StringComparison.Ordinal);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task RemoveConsumerIfEmpty_GroupGone_FailsWithNoGroup()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");
        await PendingState.AddAsync(db, keys);

        var error = Assert.Throws<RedisServerException>(() => RemoveConsumerIfEmptyCall.Run(db, keys, "c1"));

        Assert.Contains("NOGROUP", error.Message, StringComparison.Ordinal);
    }
}
