using System.Globalization;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>deadLetter.lua called directly through <see cref="DeadLetterCall"/>, on a real redis-server.</summary>
public sealed class DeadLetterScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const long Retention = 60_000;

    [Fact]
    public async Task DeadLetter_RetriedKeyedJob_MovesItToTheDeadLettersFreesItsKeyAndEndsItsRecord()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var e2 = await SettleState.RetriedHeldAsync(db, keys, "key-1");

        Assert.True(DeadLetterCall.Run(db, keys, ScriptState.Consumer, e2, "boom 2", "failed", Retention));

        // One dead letter under the job's id, with the key it held; the job ended (D) with both attempts.
        var dead = (await db.StreamRangeAsync(keys.Dead)).Single();
        string f = (string)dead["f"]!;
        Assert.Equal(
            ["j", "p", "a", "t", "e", "r", "f", "c", "k"],
            dead.Values.Select(v => (string)v.Name!));
        Assert.Equal(
            [e2.JobId, SettleState.Payload, "2", "1000", "boom 2", "failed", f, "c1", "key-1"],
            dead.Values.Select(v => (string)v.Value!));
        var (header, attempts) = SettleState.ReadRecord((string)(await db.HashGetAsync(keys.EndedRecords, e2.JobId))!);
        Assert.Equal(["D", "", f, "2", "1000", "c1", "1003", "boom 2"], header);
        Assert.Equal(["1", "c1", "1001", "1002", "R", "boom"], Assert.Single(attempts));
        var listed = (await db.SortedSetRangeByRankWithScoresAsync(keys.DeadLettered)).Single();
        Assert.Equal(e2.JobId, (string?)listed.Element);
        Assert.Equal(long.Parse(f, CultureInfo.InvariantCulture), (long)listed.Score);

        // Nothing left of the live job: its entries settled and trimmed, its key, live record and pointer gone.
        Assert.Equal(0, await db.StreamLengthAsync(keys.Stream));
        Assert.Equal(0, await SettleState.PendingAsync(db, keys));
        Assert.Equal(["dead", "ended", "ended:D", "epoch", "stream"], await SettleState.KeyNamesAsync(db, keys));
    }

    [Fact]
    public async Task DeadLetter_WithoutKeyOrRetention_WritesTheDeadLetterAloneAndNoRecord()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var e1 = await SettleState.HeldAsync(db, keys) with { StartedAtMs = 0 };

        Assert.True(DeadLetterCall.Run(db, keys, ScriptState.Consumer, e1, "", "unreadable", finishedRetentionMs: 0));

        var dead = (await db.StreamRangeAsync(keys.Dead)).Single();
        Assert.Equal(["j", "p", "a", "t", "e", "r", "f", "c"], dead.Values.Select(v => (string)v.Name!));
        Assert.Equal([e1.JobId, SettleState.Payload, "1", "1000", "", "unreadable"], dead.Values.Take(6).Select(v => (string)v.Value!));
        Assert.Equal(["dead", "epoch", "stream"], await SettleState.KeyNamesAsync(db, keys));
    }

    [Theory]
    [InlineData(true, "")]
    [InlineData(false, "1")]
    public async Task DeadLetter_CancelAskedByTheEntryOrByTheRecord_IsKeptInTheEndedRecord(bool entrySaysSo, string recordFlag)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys) with { CancelRequested = entrySaysSo };

        // cancel.lua marks a running job's live record ('r', cancel '1'): the entry the consumer holds may not know it.
        await db.StringSetAsync(keys.JobRecord(held.JobId), "r\u001f" + recordFlag + "\u001f\u001f1\u001f1000\u001f\u001f\u001f");

        Assert.True(DeadLetterCall.Run(db, keys, ScriptState.Consumer, held, "boom", "failed", Retention));

        var (header, attempts) = SettleState.ReadRecord((string)(await db.HashGetAsync(keys.EndedRecords, held.JobId))!);
        Assert.Equal(["D", "1"], header[..2]);
        Assert.Empty(attempts);
        Assert.False(await db.KeyExistsAsync(keys.JobRecord(held.JobId)));
    }

    [Fact]
    public async Task DeadLetter_EntryAnotherConsumerOwns_AnswersFalseWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, "k", consumer: "c2");
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.False(DeadLetterCall.Run(db, keys, ScriptState.Consumer, held, "boom", "failed", Retention));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task DeadLetter_EntryAlreadySettled_AnswersFalseWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, "k");
        await db.StreamAcknowledgeAsync(keys.Stream, RedisStreamKeys.Group, held.StreamId);
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.False(DeadLetterCall.Run(db, keys, ScriptState.Consumer, held, "boom", "failed", Retention));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task DeadLetter_EntryRedisLost_IsStoredAgainAsADeadLetter(bool alreadyFound)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var lost = await SettleState.LostAsync(db, keys, "k") with { Vanished = alreadyFound };

        Assert.True(DeadLetterCall.Run(db, keys, ScriptState.Consumer, lost, "boom", "failed", Retention));

        var dead = (await db.StreamRangeAsync(keys.Dead)).Single();
        Assert.Equal(lost.JobId, (string?)dead["j"]);
        Assert.Equal("k", (string?)dead["k"]);
        Assert.StartsWith("D\u001f", (string?)await db.HashGetAsync(keys.EndedRecords, lost.JobId), StringComparison.Ordinal);
        Assert.Equal(0, await SettleState.PendingAsync(db, keys));
    }

    [Fact]
    public async Task DeadLetter_KeyHeldByAnotherJob_LeavesTheKeyAlone()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, "k");
        await db.StringSetAsync(keys.IdempotencyKey("k"), "9-9|9-9");

        Assert.True(DeadLetterCall.Run(db, keys, ScriptState.Consumer, held, "boom", "failed", Retention));

        Assert.Equal("9-9|9-9", (string?)await db.StringGetAsync(keys.IdempotencyKey("k")));
    }

    [Theory]
    [InlineData("a|b", "{}")]
    [InlineData("{q}:stream", "")]
    [InlineData("}{", "[\"|\",\"\\u001f\"]")]
    [InlineData("k\u001fx\u001ey", "{\"s\":\"|z1|\"}")]
    public async Task DeadLetter_HostileKeyOrPayload_StoredVerbatimAndTheKeyFreed(string key, string payload)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, key, payload);

        Assert.True(DeadLetterCall.Run(db, keys, ScriptState.Consumer, held, "boom", "failed", Retention));

        var dead = (await db.StreamRangeAsync(keys.Dead)).Single();
        Assert.Equal(payload, (string?)dead["p"]);
        Assert.Equal(key, (string?)dead["k"]);
        Assert.False(await db.KeyExistsAsync(keys.IdempotencyKey(key)));
    }

    [Fact]
    public async Task DeadLetter_HugePayloadAndErrorWithTheRecordsSeparators_StoredWholeAndTheRecordReadable()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string payload = "\"" + new string('x', 1024 * 1024) + "\"";
        var held = await SettleState.HeldAsync(db, keys, payload: payload);

        Assert.True(DeadLetterCall.Run(db, keys, ScriptState.Consumer, held, "a\u001fb\u001ec|d", "failed", Retention));

        var dead = (await db.StreamRangeAsync(keys.Dead)).Single();
        Assert.Equal(payload, (string?)dead["p"]);
        Assert.Equal("a b c|d", (string?)dead["e"]);
        var (header, attempts) = SettleState.ReadRecord((string)(await db.HashGetAsync(keys.EndedRecords, held.JobId))!);
        Assert.Equal(["D", "", (string)dead["f"]!, "1", "1000", "c1", "1001", "a b c|d"], header);
        Assert.Empty(attempts);
    }

    [Fact]
    public async Task DeadLetter_DeadLettersKeyOfAnotherType_FailsWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, "k");
        await db.StringSetAsync(keys.Dead, "not a stream");
        string before = await ScriptState.SnapshotAsync(db, keys);

        var error = Assert.Throws<RedisServerException>(() => DeadLetterCall.Run(db, keys, ScriptState.Consumer, held, "boom", "failed", Retention));
        Assert.Contains("WRONGTYPE", error.Message, StringComparison.Ordinal);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }
}
