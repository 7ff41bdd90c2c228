using System.Globalization;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>settleCanceled.lua called directly through <see cref="SettleCanceledCall"/>, on a real redis-server.</summary>
public sealed class SettleCanceledScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const long Retention = 60_000;

    [Fact]
    public async Task SettleCanceled_RetriedKeyedJob_EndsItAsCanceledFreesItsKeyAndKeepsItsHistory()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var e2 = await SettleState.RetriedHeldAsync(db, keys, "key-1") with { CancelRequested = true };

        Assert.True(SettleCanceledCall.Run(db, keys, ScriptState.Consumer, e2, Retention));

        var listed = (await db.SortedSetRangeByRankWithScoresAsync(keys.Canceled)).Single();
        Assert.Equal(e2.JobId, (string?)listed.Element);
        string at = ((long)listed.Score).ToString(CultureInfo.InvariantCulture);
        var (header, attempts) = SettleState.ReadRecord((string)(await db.HashGetAsync(keys.EndedRecords, e2.JobId))!);
        Assert.Equal(["C", "1", at, "2", "1000", "c1", "1003", ""], header);
        Assert.Equal(["1", "c1", "1001", "1002", "R", "boom"], Assert.Single(attempts));

        // Nothing left of the live job: its entries settled and trimmed, its key, live record and pointer gone.
        Assert.Equal(0, await db.StreamLengthAsync(keys.Stream));
        Assert.Equal(0, await SettleState.PendingAsync(db, keys));
        Assert.Equal(["ended", "ended:C", "epoch", "stream"], await SettleState.KeyNamesAsync(db, keys));
    }

    [Fact]
    public async Task SettleCanceled_NeverStartedWithoutRetention_SettlesItWithoutARecord()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, "k") with { StartedAtMs = 0, CancelRequested = true };
        await db.StringSetAsync(keys.JobRecord(held.JobId), "r\u001f1\u001f\u001f1\u001f1000\u001f\u001f\u001f");

        Assert.True(SettleCanceledCall.Run(db, keys, ScriptState.Consumer, held, finishedRetentionMs: 0));

        Assert.Equal(0, await SettleState.PendingAsync(db, keys));
        Assert.Equal(["epoch", "stream"], await SettleState.KeyNamesAsync(db, keys));
    }

    [Fact]
    public async Task SettleCanceled_NeverStarted_RecordsNoStart()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys) with { StartedAtMs = 0 };

        Assert.True(SettleCanceledCall.Run(db, keys, ScriptState.Consumer, held, Retention));

        var (header, attempts) = SettleState.ReadRecord((string)(await db.HashGetAsync(keys.EndedRecords, held.JobId))!);
        Assert.Equal(["C", "1"], header[..2]);
        Assert.Equal(["1", "1000", "c1", "", ""], header[3..]);
        Assert.Empty(attempts);
    }

    [Fact]
    public async Task SettleCanceled_EntryAnotherConsumerOwns_AnswersFalseWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, "k", consumer: "c2");
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.False(SettleCanceledCall.Run(db, keys, ScriptState.Consumer, held, Retention));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task SettleCanceled_EntryAlreadySettled_AnswersFalseWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, "k");
        await db.StreamAcknowledgeAsync(keys.Stream, RedisStreamKeys.Group, held.StreamId);
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.False(SettleCanceledCall.Run(db, keys, ScriptState.Consumer, held, Retention));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task SettleCanceled_EntryRedisLost_IsEndedAsCanceled(bool alreadyFound)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var lost = await SettleState.LostAsync(db, keys, "k") with { Vanished = alreadyFound };

        Assert.True(SettleCanceledCall.Run(db, keys, ScriptState.Consumer, lost, Retention));

        Assert.StartsWith("C\u001f1\u001f", (string?)await db.HashGetAsync(keys.EndedRecords, lost.JobId), StringComparison.Ordinal);
        Assert.Equal([lost.JobId], (await db.SortedSetRangeByRankAsync(keys.Canceled)).Select(m => (string?)m));
        Assert.Equal(0, await SettleState.PendingAsync(db, keys));
    }

    [Fact]
    public async Task SettleCanceled_KeyHeldByAnotherJob_LeavesTheKeyAlone()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, "k");
        await db.StringSetAsync(keys.IdempotencyKey("k"), "9-9|9-9");

        Assert.True(SettleCanceledCall.Run(db, keys, ScriptState.Consumer, held, Retention));

        Assert.Equal("9-9|9-9", (string?)await db.StringGetAsync(keys.IdempotencyKey("k")));
    }

    [Theory]
    [InlineData("a|b")]
    [InlineData("{q}:stream")]
    [InlineData("}{")]
    [InlineData("k\u001fx\u001ey")]
    public async Task SettleCanceled_HostileKey_IsFreed(string key)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, key);

        Assert.True(SettleCanceledCall.Run(db, keys, ScriptState.Consumer, held, Retention));

        Assert.False(await db.KeyExistsAsync(keys.IdempotencyKey(key)));
        Assert.Equal(["ended", "ended:C", "epoch", "stream"], await SettleState.KeyNamesAsync(db, keys));
    }
}
