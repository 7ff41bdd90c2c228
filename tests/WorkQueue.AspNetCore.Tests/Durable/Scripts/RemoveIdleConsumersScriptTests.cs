using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>removeIdleConsumers.lua called directly through <see cref="RemoveIdleConsumersCall"/>, on a real redis-server.</summary>
public sealed class RemoveIdleConsumersScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task RemoveIdleConsumers_OthersIdleLongerAndEmpty_RemovedButNeverItselfNorOneHoldingEntries()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string held = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys, 1, "holder");
        string[] empty = ["gone", "{c1}", "c1 ", "a|\u0001\u001f", string.Empty];
        foreach (string name in empty.Append("c1"))
        {
            await PendingState.AddConsumerAsync(db, keys, name);
        }

        // Idle only grows: wait until every consumer has been idle for longer than the bound asked.
        const long minIdleMs = 50;
        await Eventually.HoldsAsync(
            async () => (await db.StreamConsumerInfoAsync(keys.Stream, RedisStreamKeys.Group)).All(static c => c.IdleTimeInMilliseconds > minIdleMs),
            "every consumer idle for more than 50 ms");

        string[] removed = RemoveIdleConsumersCall.Run(db, keys, "c1", minIdleMs);

        Assert.Equal(empty.Order(StringComparer.Ordinal), removed.Order(StringComparer.Ordinal));
        Assert.Equal([("c1", 0L), ("holder", 1L)], await PendingState.ConsumersAsync(db, keys));
        Assert.Equal("holder", (await PendingState.PendingAsync(db, keys, held))!.Value.Consumer);
    }

    [Fact]
    public async Task RemoveIdleConsumers_NoneIdleThatLong_RemovesNoneAndWritesNothing()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await PendingState.AddConsumerAsync(db, keys, "c1");
        await PendingState.AddConsumerAsync(db, keys, "c2");
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.Empty(RemoveIdleConsumersCall.Run(db, keys, "c1", 1_000_000_000_000));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Theory]
    [InlineData("nope")]
    [InlineData("")]
    public async Task RemoveIdleConsumers_MalformedMinIdle_FailsWithoutRemovingAny(string minIdle)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        foreach (string name in new[] { "a", "b", "c" })
        {
            await PendingState.AddConsumerAsync(db, keys, name);
        }

        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.Throws<RedisServerException>(() => db.ScriptEvaluate(DurableScripts.RemoveIdleConsumers, RemoveIdleConsumersCall.Keys(keys), [RedisStreamKeys.Group, "c1", minIdle]));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task RemoveIdleConsumers_NoGroupOrStreamOfAnotherType_RemovesNoneWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var noGroup = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");
        await PendingState.AddAsync(db, noGroup);
        var wrongType = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");
        await db.StringSetAsync(wrongType.Stream, "not a stream");
        string before = await ScriptState.SnapshotAsync(db, noGroup) + await ScriptState.SnapshotAsync(db, wrongType);

        Assert.Empty(RemoveIdleConsumersCall.Run(db, noGroup, "c1", 0));
        Assert.Empty(RemoveIdleConsumersCall.Run(db, wrongType, "c1", 0));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, noGroup) + await ScriptState.SnapshotAsync(db, wrongType));
    }
}
