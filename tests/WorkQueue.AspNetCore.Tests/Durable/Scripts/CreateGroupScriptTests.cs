using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>createGroup.lua called directly through <see cref="CreateGroupCall"/>, on a real redis-server.</summary>
public sealed class CreateGroupScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task CreateGroup_NewQueue_MakesTheGroupFromTheStreamsStartAndOneEpoch()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");
        string early = await PendingState.AddAsync(db, keys);

        string epoch = CreateGroupCall.Run(db, keys, "c1");

        // The epoch is Redis's time and the consumer that made it, kept without expiry; the group has no consumer yet.
        Assert.Matches(@"^\d+\.\d+@c1$", epoch);
        Assert.Equal(epoch, await PendingState.EpochAsync(db, keys));
        Assert.Null(await db.KeyTimeToLiveAsync(keys.Epoch));
        Assert.Equal(["epoch", "stream"], await PendingState.KeyNamesAsync(db, keys));
        var group = Assert.Single(await db.StreamGroupInfoAsync(keys.Stream));
        Assert.Equal((RedisStreamKeys.Group, 0, 0L, "0-0"), ((string)group.Name!, group.ConsumerCount, group.PendingMessageCount, (string?)group.LastDeliveredId));

        // A job enqueued before any consumer existed is delivered.
        Assert.Equal([early], await ScriptState.DeliverAsync(db, keys));
    }

    [Fact]
    public async Task CreateGroup_Again_KeepsTheGroupAndTheEpochAndWritesNothing()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");
        string epoch = CreateGroupCall.Run(db, keys, "c1");
        await PendingState.AddAsync(db, keys);
        await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);
        string before = await ScriptState.SnapshotAsync(db, keys);

        // Another instance starting: the same epoch, the group's delivered and pending entries as they were.
        Assert.Equal(epoch, CreateGroupCall.Run(db, keys, "c2"));
        Assert.Equal(epoch, CreateGroupCall.Run(db, keys, "c1"));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task CreateGroup_EpochGoneButGroupKept_WritesANewEpochOnceAndKeepsIt()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");
        string first = CreateGroupCall.Run(db, keys, "c1");
        await db.KeyDeleteAsync(keys.Epoch);

        string second = CreateGroupCall.Run(db, keys, "c2");

        Assert.NotEqual(first, second);
        Assert.EndsWith("@c2", second, StringComparison.Ordinal);
        Assert.Equal(second, CreateGroupCall.Run(db, keys, "c3"));
        Assert.Equal(second, await PendingState.EpochAsync(db, keys));
    }

    [Fact]
    public async Task CreateGroup_RedisLostItsData_MakesTheGroupAgainWithANewEpoch()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");
        string first = CreateGroupCall.Run(db, keys, "c1");
        await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);
        await db.KeyDeleteAsync([keys.Stream, keys.Epoch]);

        string second = CreateGroupCall.Run(db, keys, "c2");

        // Whoever makes the group again writes the epoch with it, so entries held under the first are known lost.
        Assert.NotEqual(first, second);
        Assert.Equal(second, await PendingState.EpochAsync(db, keys));
        var group = Assert.Single(await db.StreamGroupInfoAsync(keys.Stream));
        Assert.Equal((0L, "0-0"), (group.PendingMessageCount, (string?)group.LastDeliveredId));
    }

    [Theory]
    [InlineData("")]
    [InlineData("a|b")]
    [InlineData("\u0001k\u0001")]
    [InlineData("\u001f\u001e")]
    [InlineData("{q}:stream")]
    [InlineData("@")]
    public async Task CreateGroup_HostileConsumerName_IsOnlyTheEpochsTail(string consumer)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");

        string epoch = CreateGroupCall.Run(db, keys, consumer);

        Assert.Equal("@" + consumer, epoch[epoch.IndexOf('@', StringComparison.Ordinal)..]);
        Assert.Equal(["epoch", "stream"], await PendingState.KeyNamesAsync(db, keys));
        Assert.Equal(0, Assert.Single(await db.StreamGroupInfoAsync(keys.Stream)).ConsumerCount);
    }

    [Fact]
    public async Task CreateGroup_StreamKeyOfAnotherType_FailsWithoutWritingTheEpoch()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");
        await db.StringSetAsync(keys.Stream, "not a stream");
        string before = await ScriptState.SnapshotAsync(db, keys);

        var error = Assert.Throws<RedisServerException>(() => CreateGroupCall.Run(db, keys, "c1"));

        Assert.Contains("WRONGTYPE", error.Message, StringComparison.Ordinal);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task CreateGroup_EpochKeyOfAnotherType_MakesTheGroupWithoutAnEpochAndLeavesTheKey()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");
        await db.HashSetAsync(keys.Epoch, "f", "v");

        // As includes/epoch.lua says: a token Redis refuses reads as none (held entries then rely on vanished.lua's
        // other test), and the queue still starts; the key set by hand is not overwritten.
        Assert.Equal(string.Empty, CreateGroupCall.Run(db, keys, "c1"));
        Assert.Equal(string.Empty, CreateGroupCall.Run(db, keys, "c2"));

        Assert.Single(await db.StreamGroupInfoAsync(keys.Stream));
        Assert.Equal([new HashEntry("f", "v")], await db.HashGetAllAsync(keys.Epoch));
    }
}
