using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>stats.lua called directly through <see cref="StatsCall"/>, on a real redis-server.</summary>
public sealed class StatsScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task Stats_QueueWithEveryKindOfJob_CountsMatchTheStateAndNothingIsWritten()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);

        // Four entries: three delivered to c1, one of them settled (waiting for the trim), one queued.
        for (int i = 0; i < 4; i++)
        {
            await PendingState.AddAsync(db, keys);
        }

        var delivered = await ScriptState.DeliverAsync(db, keys, 3);
        await db.StreamAcknowledgeAsync(keys.Stream, RedisStreamKeys.Group, delivered[0]);
        await PendingState.AddConsumerAsync(db, keys, "c2");

        // Two retries and a scheduled job in the delayed set; two dead letters.
        await db.SortedSetAddAsync(keys.Delayed, "1-1|2|1000|{}", 5_000_000_000_000);
        await db.SortedSetAddAsync(keys.Delayed, "1-2|2|1000|{}", 5_000_000_000_000);
        await db.SortedSetAddAsync(keys.Delayed, "s5-1|1|1000|{}", 5_000_000_000_000);
        await db.HashSetAsync(keys.Scheduled, "s5-1", "s5-1|1|1000|{}");
        await db.StreamAddAsync(keys.Dead, [new("j", "7-1"), new("p", "{}")]);
        await db.StreamAddAsync(keys.Dead, [new("j", "7-2"), new("p", "{}")]);
        string before = await ScriptState.SnapshotAsync(db, keys);

        var stats = StatsCall.Run(db, keys);

        Assert.Equal((3L, 2L, 2L, 2L, (long?)1, 1L), (stats.Length, stats.DelayedRetries, stats.DeadLetters, stats.Pending, stats.Lag, stats.Scheduled));
        Assert.Equal([("c1", 2L), ("c2", 0L)], stats.Consumers.Select(static c => (c.Name, c.Pending)).OrderBy(static c => c.Name, StringComparer.Ordinal));
        Assert.All(stats.Consumers, static c => Assert.True(c.IdleMs >= 0));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task Stats_LagUnknown_CountsTheStreamsLength()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await PendingState.AddAsync(db, keys);
        string deleted = await PendingState.AddAsync(db, keys);
        await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);

        // An entry deleted by hand after the last delivered one: Redis can no longer tell the lag.
        await db.StreamDeleteAsync(keys.Stream, [deleted]);

        var stats = StatsCall.Run(db, keys);

        Assert.Equal((2L, 1L, (long?)null), (stats.Length, stats.Pending, stats.Lag));
    }

    [Fact]
    public async Task Stats_NoQueueYet_CountsNothing()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");

        var stats = StatsCall.Run(db, keys);

        Assert.Equal((0L, 0L, 0L, 0L, (long?)null, 0L), (stats.Length, stats.DelayedRetries, stats.DeadLetters, stats.Pending, stats.Lag, stats.Scheduled));
        Assert.Empty(stats.Consumers);
        Assert.Empty(await PendingState.KeyNamesAsync(db, keys));
    }

    [Theory]
    [InlineData("")]
    [InlineData("nope")]
    [InlineData("workers|x")]
    public async Task Stats_GroupThatIsNotThere_CountsTheStreamWithoutAGroup(string group)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await PendingState.AddAsync(db, keys);
        await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys);

        var stats = StatsReply.Read(db.ScriptEvaluate(DurableScripts.Stats, StatsCall.Keys(keys), [group]));

        Assert.Equal((2L, 0L, (long?)null), (stats.Length, stats.Pending, stats.Lag));
        Assert.Empty(stats.Consumers);
    }

    [Theory]
    [InlineData("stream")]
    [InlineData("delayed")]
    [InlineData("dead")]
    [InlineData("scheduled")]
    public async Task Stats_KeyOfAnotherType_FailsWithRedisErrorWithoutWriting(string which)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");
        var key = which switch { "stream" => keys.Stream, "delayed" => keys.Delayed, "dead" => keys.Dead, _ => keys.Scheduled };
        await db.ListRightPushAsync(key, "x");
        string before = await ScriptState.SnapshotAsync(db, keys);

        var error = Assert.Throws<RedisServerException>(() => StatsCall.Run(db, keys));

        Assert.Contains("WRONGTYPE", error.Message, StringComparison.Ordinal);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }
}
