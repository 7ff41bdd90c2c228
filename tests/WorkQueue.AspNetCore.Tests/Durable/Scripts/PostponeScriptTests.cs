using System.Globalization;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>postpone.lua called directly through <see cref="PostponeCall"/>, on a real redis-server.</summary>
public sealed class PostponeScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const long Delay = 60_000;

    [Fact]
    public async Task Postpone_RetriedKeyedJob_WaitsAsTheSameAttemptWithItsKeyAndRecordUntouched()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var e2 = await SettleState.RetriedHeldAsync(db, keys, "key-1");
        string? record = await db.StringGetAsync(keys.JobRecord(e2.JobId));

        Assert.True(PostponeCall.Run(db, keys, ScriptState.Consumer, e2, Delay));

        // Attempt 2 again (not 3): nothing ran; the record keeps the first attempt's failure and nothing more.
        var member = (await db.SortedSetRangeByRankWithScoresAsync(keys.Delayed)).Single();
        Assert.Equal($"{e2.JobId}|2|1000|\u0001key-1\u0001{SettleState.Payload}", (string?)member.Element);
        string score = ((long)member.Score).ToString(CultureInfo.InvariantCulture);
        Assert.Equal(record, (string?)await db.StringGetAsync(keys.JobRecord(e2.JobId)));
        Assert.Equal("z" + score, (string?)await db.StringGetAsync(keys.JobLocation(e2.JobId)));
        Assert.Equal(e2.JobId + "|z" + score, (string?)await db.StringGetAsync(keys.IdempotencyKey("key-1")));
        Assert.Equal(0, await db.StreamLengthAsync(keys.Stream));
        Assert.Equal(0, await SettleState.PendingAsync(db, keys));
    }

    [Fact]
    public async Task Postpone_FirstAttempt_NoRecordIsWritten()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var e1 = await SettleState.HeldAsync(db, keys, payload: "other\u001f{\"n\":1}");

        Assert.True(PostponeCall.Run(db, keys, ScriptState.Consumer, e1, Delay));

        Assert.Equal($"{e1.JobId}|1|1000|other\u001f{{\"n\":1}}", (string?)(await db.SortedSetRangeByRankAsync(keys.Delayed)).Single());
        Assert.Equal(["at:" + e1.JobId, "delayed", "epoch", "stream"], await SettleState.KeyNamesAsync(db, keys));
    }

    [Fact]
    public async Task Postpone_EntryAnotherConsumerOwns_AnswersFalseWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, "k", consumer: "c2");
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.False(PostponeCall.Run(db, keys, ScriptState.Consumer, held, Delay));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Theory]
    [InlineData("not-an-id")]
    [InlineData("99999999999999999999-0")]
    public async Task Postpone_IdNoEntryCanHave_AnswersFalseWithoutWriting(string id)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys);
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.False(PostponeCall.Run(db, keys, ScriptState.Consumer, held with { StreamId = id }, Delay));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task Postpone_EntryRedisLost_IsStoredAgain()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var lost = await SettleState.LostAsync(db, keys);

        Assert.True(PostponeCall.Run(db, keys, ScriptState.Consumer, lost, Delay));
        Assert.Equal($"{lost.JobId}|1|1000|{SettleState.Payload}", (string?)(await db.SortedSetRangeByRankAsync(keys.Delayed)).Single());
    }
}
