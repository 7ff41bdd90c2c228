using System.Globalization;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>scheduleRetry.lua called directly through <see cref="ScheduleRetryCall"/>, on a real redis-server.</summary>
public sealed class ScheduleRetryScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const long Delay = 60_000;

    [Fact]
    public async Task ScheduleRetry_RetriedKeyedJob_MovesItToTheDelayedSetWithItsKeyHistoryAndPointer()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var e2 = await SettleState.RetriedHeldAsync(db, keys, "key-1");
        var nudged = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        await client.GetSubscriber().SubscribeAsync(keys.Nudge, (_, m) => nudged.TrySetResult((string)m!));

        Assert.True(ScheduleRetryCall.Run(db, keys, ScriptState.Consumer, e2, Delay, "boom 2"));

        // The third attempt waits under the job's id (E1), the key framed before the payload, due a delay after the
        // second attempt ended (both by Redis's clock).
        var member = (await db.SortedSetRangeByRankWithScoresAsync(keys.Delayed)).Single();
        Assert.Equal($"{e2.JobId}|3|1000|\u0001key-1\u0001{SettleState.Payload}", (string?)member.Element);
        string score = ((long)member.Score).ToString(CultureInfo.InvariantCulture);
        var (header, attempts) = SettleState.ReadRecord((string)(await db.StringGetAsync(keys.JobRecord(e2.JobId)))!);
        Assert.Equal(["z", "", "", "2", "1000", "c1", "1003", "boom 2"], header);
        Assert.Equal(2, attempts.Length);
        Assert.Equal(["1", "c1", "1001", "1002", "R", "boom"], attempts[0]);
        Assert.Equal(["2", "c1", "1003"], attempts[1][..3]);
        Assert.Equal((long)member.Score - Delay, long.Parse(attempts[1][3], CultureInfo.InvariantCulture));
        Assert.Equal(["R", "boom 2"], attempts[1][4..]);
        Assert.Equal("z" + score, (string?)await db.StringGetAsync(keys.JobLocation(e2.JobId)));
        Assert.Equal(e2.JobId + "|z" + score, (string?)await db.StringGetAsync(keys.IdempotencyKey("key-1")));

        // Both entries settled and trimmed; the earliest due retry nudges the idle consumers.
        Assert.Equal(0, await db.StreamLengthAsync(keys.Stream));
        Assert.Equal(0, await SettleState.PendingAsync(db, keys));
        Assert.Equal(["at:" + e2.JobId, "delayed", "epoch", "job:" + e2.JobId, "key:key-1", "stream"], await SettleState.KeyNamesAsync(db, keys));
        Assert.Equal("1", await nudged.Task.WaitAsync(TimeSpan.FromSeconds(10)));
    }

    [Fact]
    public async Task ScheduleRetry_FirstAttemptWithoutKey_StoresThePayloadAloneAndNoKey()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var e1 = await SettleState.HeldAsync(db, keys) with { StartedAtMs = 0 };

        Assert.True(ScheduleRetryCall.Run(db, keys, ScriptState.Consumer, e1, Delay, ""));

        Assert.Equal($"{e1.JobId}|2|1000|{SettleState.Payload}", (string?)(await db.SortedSetRangeByRankAsync(keys.Delayed)).Single());
        var (header, attempts) = SettleState.ReadRecord((string)(await db.StringGetAsync(keys.JobRecord(e1.JobId)))!);
        Assert.Equal(["z", "", "", "1", "1000", "c1", "", ""], header);
        Assert.Equal(["1", "c1", ""], Assert.Single(attempts)[..3]);
        Assert.Equal(["at:" + e1.JobId, "delayed", "epoch", "job:" + e1.JobId, "stream"], await SettleState.KeyNamesAsync(db, keys));
    }

    [Fact]
    public async Task ScheduleRetry_EntryAnotherConsumerOwns_AnswersFalseWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, "k", consumer: "c2");
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.False(ScheduleRetryCall.Run(db, keys, ScriptState.Consumer, held, Delay, "boom"));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task ScheduleRetry_EntryAlreadySettled_AnswersFalseWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, "k");

        // Acknowledged by the round, waiting for the trim: settled, not lost.
        await db.StreamAcknowledgeAsync(keys.Stream, RedisStreamKeys.Group, held.StreamId);
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.False(ScheduleRetryCall.Run(db, keys, ScriptState.Consumer, held, Delay, "boom"));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task ScheduleRetry_EntryRedisLost_IsStoredAgain(bool alreadyFound)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var lost = await SettleState.LostAsync(db, keys, "k") with { Vanished = alreadyFound };

        Assert.True(ScheduleRetryCall.Run(db, keys, ScriptState.Consumer, lost, Delay, "boom"));

        var member = (await db.SortedSetRangeByRankWithScoresAsync(keys.Delayed)).Single();
        Assert.Equal(lost.RetryMember, (string?)member.Element);
        string where = "z" + ((long)member.Score).ToString(CultureInfo.InvariantCulture);
        Assert.Equal(lost.JobId + "|" + where, (string?)await db.StringGetAsync(keys.IdempotencyKey("k")));
        Assert.Equal(where, (string?)await db.StringGetAsync(keys.JobLocation(lost.JobId)));
        Assert.Equal(0, await db.StreamLengthAsync(keys.Stream));
        Assert.Equal(0, await SettleState.PendingAsync(db, keys));
    }

    [Fact]
    public async Task ScheduleRetry_KeyHeldByAnotherJob_LeavesTheKeyAlone()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, "k");
        await db.StringSetAsync(keys.IdempotencyKey("k"), "9-9|9-9");

        Assert.True(ScheduleRetryCall.Run(db, keys, ScriptState.Consumer, held, Delay, "boom"));

        Assert.Equal("9-9|9-9", (string?)await db.StringGetAsync(keys.IdempotencyKey("k")));
        Assert.Equal(1, await db.SortedSetLengthAsync(keys.Delayed));
    }

    [Theory]
    [InlineData("a|b", "{}")]
    [InlineData("{q}:stream", "")]
    [InlineData("}{", "[\"|\",\"\\u001f\"]")]
    [InlineData("k\u001fx\u001ey", "{\"s\":\"|z1|\"}")]
    [InlineData("k with spaces", "\"\u00e9\u4e2d\ud83d\ude00\"")]
    public async Task ScheduleRetry_HostileKeyOrPayload_StoredVerbatim(string key, string payload)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, key, payload);

        Assert.True(ScheduleRetryCall.Run(db, keys, ScriptState.Consumer, held, Delay, "boom"));

        var member = (await db.SortedSetRangeByRankWithScoresAsync(keys.Delayed)).Single();
        Assert.Equal($"{held.JobId}|2|1000|\u0001{key}\u0001{payload}", (string?)member.Element);
        Assert.Equal(held.JobId + "|z" + ((long)member.Score).ToString(CultureInfo.InvariantCulture), (string?)await db.StringGetAsync(keys.IdempotencyKey(key)));
    }

    [Fact]
    public async Task ScheduleRetry_HugePayload_StoredWhole()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string payload = "\"" + new string('x', 1024 * 1024) + "\"";
        var held = await SettleState.HeldAsync(db, keys, payload: payload);

        Assert.True(ScheduleRetryCall.Run(db, keys, ScriptState.Consumer, held, Delay, "boom"));

        Assert.Equal($"{held.JobId}|2|1000|{payload}", (string?)(await db.SortedSetRangeByRankAsync(keys.Delayed)).Single());
    }

    [Fact]
    public async Task ScheduleRetry_ErrorWithTheRecordsSeparators_KeepsTheRecordReadable()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys);
        string error = "a\u001fb\u001ec|d\n" + new string('e', 100_000);

        Assert.True(ScheduleRetryCall.Run(db, keys, ScriptState.Consumer, held, Delay, error));

        var (header, attempts) = SettleState.ReadRecord((string)(await db.StringGetAsync(keys.JobRecord(held.JobId)))!);
        string stored = "a b c|d\n" + new string('e', 100_000);
        Assert.Equal(8, header.Length);
        Assert.Equal(stored, header[7]);
        Assert.Equal(stored, Assert.Single(attempts)[5]);
    }

    [Fact]
    public async Task ScheduleRetry_DelayedSetOfAnotherType_FailsWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, "k");
        await db.StringSetAsync(keys.Delayed, "not a sorted set");
        string before = await ScriptState.SnapshotAsync(db, keys);

        var error = Assert.Throws<RedisServerException>(() => ScheduleRetryCall.Run(db, keys, ScriptState.Consumer, held, Delay, "boom"));
        Assert.Contains("WRONGTYPE", error.Message, StringComparison.Ordinal);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Theory]
    [InlineData("0-0")]
    [InlineData("18446744073709551615-18446744073709551615")]
    public async Task ScheduleRetry_LostEntryWithAnIdAtTheGrammarsBounds_IsStoredAgain(string id)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var entry = await SettleState.HeldAsync(db, keys) with { StreamId = id, JobId = id, Vanished = true };

        Assert.True(ScheduleRetryCall.Run(db, keys, ScriptState.Consumer, entry, Delay, "boom"));
        Assert.Equal(entry.RetryMember, (string?)(await db.SortedSetRangeByRankAsync(keys.Delayed)).Single());
    }
}
