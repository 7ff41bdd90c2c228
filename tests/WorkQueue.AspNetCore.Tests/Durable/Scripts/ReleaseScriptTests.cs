using System.Globalization;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>release.lua called directly through <see cref="ReleaseCall"/>, on a real redis-server.</summary>
public sealed class ReleaseScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const long Retention = 60_000;

    [Fact]
    public async Task Release_HeldEntries_HandsThemBackAtTheStreamsEndWithTheirKeysAndPointers()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var plain = await SettleState.HeldAsync(db, keys);
        var retried = await SettleState.RetriedHeldAsync(db, keys, "key-1");
        var nudged = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        await client.GetSubscriber().SubscribeAsync(keys.Nudge, (_, m) => nudged.TrySetResult((string)m!));

        Assert.Equal(2, ReleaseCall.Run(db, keys, ScriptState.Consumer, [plain, retried], Retention));

        // The held entries settled and trimmed; two new ones, not yet delivered, same attempts, each with its job's id.
        var entries = await SettleState.EntriesAsync(db, keys.Stream);
        Assert.Equal(2, entries.Length);
        string n1 = entries[0].Split(' ')[0], n2 = entries[1].Split(' ')[0];
        Assert.Equal($"{n1} p={SettleState.Payload} a=1 t=1000 j={plain.JobId}", entries[0]);
        Assert.Equal($"{n2} p={SettleState.Payload} a=2 t=1000 j={retried.JobId} k=key-1", entries[1]);
        Assert.Equal(0, await SettleState.PendingAsync(db, keys));
        Assert.Equal([n1, n2], (await db.StreamReadGroupAsync(keys.Stream, RedisStreamKeys.Group, "c3", ">", 10)).Select(e => (string)e.Id!));

        // Each job points to its new entry, the key too; the retried job's record (its failed attempt) is kept.
        Assert.Equal(n1, (string?)await db.StringGetAsync(keys.JobLocation(plain.JobId)));
        Assert.Equal(n2, (string?)await db.StringGetAsync(keys.JobLocation(retried.JobId)));
        Assert.Equal(retried.JobId + "|" + n2, (string?)await db.StringGetAsync(keys.IdempotencyKey("key-1")));
        Assert.EndsWith("\u001e1\u001fc1\u001f1001\u001f1002\u001fR\u001fboom", (string?)await db.StringGetAsync(keys.JobRecord(retried.JobId)), StringComparison.Ordinal);
        Assert.Equal(
            ["at:" + plain.JobId, "at:" + retried.JobId, "epoch", "job:" + retried.JobId, "key:key-1", "stream"],
            await SettleState.KeyNamesAsync(db, keys));
        Assert.Equal("2", await nudged.Task.WaitAsync(TimeSpan.FromSeconds(10)));
    }

    [Fact]
    public async Task Release_JobWithACancelAsked_EndsItAsCanceledInsteadOfHandingItBack()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var retried = await SettleState.RetriedHeldAsync(db, keys, "key-1");
        var other = await SettleState.HeldAsync(db, keys);

        // cancel.lua marked the running job's record (the cancel may have missed this process).
        string live = (string)(await db.StringGetAsync(keys.JobRecord(retried.JobId)))!;
        await db.StringSetAsync(keys.JobRecord(retried.JobId), "r\u001f1" + live[2..]);

        Assert.Equal(2, ReleaseCall.Run(db, keys, ScriptState.Consumer, [retried, other], Retention));

        var listed = (await db.SortedSetRangeByRankWithScoresAsync(keys.Canceled)).Single();
        Assert.Equal(retried.JobId, (string?)listed.Element);
        var (header, attempts) = SettleState.ReadRecord((string)(await db.HashGetAsync(keys.EndedRecords, retried.JobId))!);
        Assert.Equal(["C", "1", ((long)listed.Score).ToString(CultureInfo.InvariantCulture), "2", "1000", "c1", "", ""], header);
        Assert.Equal(["1", "c1", "1001", "1002", "R", "boom"], Assert.Single(attempts));

        // Only the other one is handed back; nothing of the cancelled job is left but its ended record.
        var entries = await SettleState.EntriesAsync(db, keys.Stream);
        Assert.EndsWith($" j={other.JobId}", Assert.Single(entries), StringComparison.Ordinal);
        Assert.Equal(0, await SettleState.PendingAsync(db, keys));
        Assert.Equal(["at:" + other.JobId, "ended", "ended:C", "epoch", "stream"], await SettleState.KeyNamesAsync(db, keys));
    }

    [Fact]
    public async Task Release_EndedJobWithACancelAsked_IsHandedBackNotEndedAgain()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys);
        await db.HashSetAsync(keys.EndedRecords, held.JobId, "C\u001f1\u001f5\u001f1\u001f1000\u001fc9\u001f\u001f");

        Assert.Equal(1, ReleaseCall.Run(db, keys, ScriptState.Consumer, [held], Retention));

        Assert.Single(await SettleState.EntriesAsync(db, keys.Stream));
        Assert.Equal("C\u001f1\u001f5\u001f1\u001f1000\u001fc9\u001f\u001f", (string?)await db.HashGetAsync(keys.EndedRecords, held.JobId));
    }

    [Fact]
    public async Task Release_AmongEntriesAnotherConsumerOwns_HandsBackOnlyThisConsumers()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var theirs = await SettleState.HeldAsync(db, keys, "k0", consumer: "c2");
        var mine = await SettleState.HeldAsync(db, keys, "k1");
        var settled = await SettleState.HeldAsync(db, keys, "k2");
        await db.StreamAcknowledgeAsync(keys.Stream, RedisStreamKeys.Group, settled.StreamId);

        Assert.Equal(1, ReleaseCall.Run(db, keys, ScriptState.Consumer, [theirs, mine, settled], Retention));

        // The other consumer's entry stays pending there (so the stream keeps everything from it on); its key unmoved.
        var pending = await db.StreamPendingMessagesAsync(keys.Stream, RedisStreamKeys.Group, 10, RedisValue.Null);
        Assert.Equal([(theirs.StreamId, "c2")], pending.Select(p => ((string)p.MessageId!, (string)p.ConsumerName!)));
        Assert.Equal(theirs.JobId + "|" + theirs.StreamId, (string?)await db.StringGetAsync(keys.IdempotencyKey("k0")));
        Assert.Equal(settled.JobId + "|" + settled.StreamId, (string?)await db.StringGetAsync(keys.IdempotencyKey("k2")));
        var entries = await SettleState.EntriesAsync(db, keys.Stream);
        Assert.Equal(4, entries.Length);
        string moved = entries[3].Split(' ')[0];
        Assert.Equal($"{moved} p={SettleState.Payload} a=1 t=1000 j={mine.JobId} k=k1", entries[3]);
        Assert.Equal(mine.JobId + "|" + moved, (string?)await db.StringGetAsync(keys.IdempotencyKey("k1")));
    }

    [Fact]
    public async Task Release_NoEntryThisConsumerOwns_AnswersZeroWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var theirs = await SettleState.HeldAsync(db, keys, "k", consumer: "c2");
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.Equal(0, ReleaseCall.Run(db, keys, ScriptState.Consumer, [theirs], Retention));
        Assert.Equal(0, ReleaseCall.Run(db, keys, ScriptState.Consumer, [], Retention));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Release_EntryRedisLost_IsStoredAgainAsANewEntry(bool alreadyFound)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var lost = await SettleState.LostAsync(db, keys, "k") with { Vanished = alreadyFound };

        Assert.Equal(1, ReleaseCall.Run(db, keys, ScriptState.Consumer, [lost], Retention));

        var entries = await SettleState.EntriesAsync(db, keys.Stream);
        string moved = Assert.Single(entries).Split(' ')[0];
        Assert.Equal($"{moved} p={SettleState.Payload} a=1 t=1000 j={lost.JobId} k=k", entries[0]);
        Assert.Equal(lost.JobId + "|" + moved, (string?)await db.StringGetAsync(keys.IdempotencyKey("k")));
        Assert.Equal(moved, (string?)await db.StringGetAsync(keys.JobLocation(lost.JobId)));
    }

    [Theory]
    [InlineData("a|b", "{}")]
    [InlineData("{q}:stream", "")]
    [InlineData("}{", "[\"|\",\"\\u001f\"]")]
    [InlineData("k\u001fx\u001ey", "{\"s\":\"|z1|\"}")]
    public async Task Release_HostileKeyOrPayload_HandedBackVerbatim(string key, string payload)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, key, payload);

        Assert.Equal(1, ReleaseCall.Run(db, keys, ScriptState.Consumer, [held], Retention));

        var entry = (await db.StreamRangeAsync(keys.Stream)).Single();
        Assert.Equal(payload, (string?)entry["p"]);
        Assert.Equal(key, (string?)entry["k"]);
        Assert.Equal(held.JobId + "|" + entry.Id, (string?)await db.StringGetAsync(keys.IdempotencyKey(key)));
    }

    [Fact]
    public async Task Release_HugePayloads_HandedBackWhole()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string payload = "\"" + new string('x', 1024 * 1024) + "\"";
        var first = await SettleState.HeldAsync(db, keys, payload: payload);
        var second = await SettleState.HeldAsync(db, keys, payload: payload + " ");

        Assert.Equal(2, ReleaseCall.Run(db, keys, ScriptState.Consumer, [first, second], Retention));

        Assert.Equal([payload, payload + " "], (await db.StreamRangeAsync(keys.Stream)).Select(e => (string?)e["p"]));
    }

    /// <summary>
    /// An id no entry can have is nobody's: left out, and the entries around it are handed back. It once failed the
    /// call after the entries before it were handed back (XPENDING refuses 'nope'; it reads '-' as a range bound where
    /// XACK refuses it), so the store sent the whole batch again and again.
    /// </summary>
    [Theory]
    [InlineData("-", false)]
    [InlineData("-", true)]
    [InlineData("+", true)]
    [InlineData("(1-0", true)]
    [InlineData("nope", false)]
    [InlineData("", true)]
    [InlineData("1", true)]
    [InlineData("01-0", true)]
    [InlineData("1-0|z5", false)]
    [InlineData("99999999999999999999999-0", false)]
    [InlineData("1-18446744073709551616", true)]
    public async Task Release_IdNoEntryCanHaveAmongGoodEntries_IsLeftOutAndTheOthersHandedBack(string id, bool alreadyFound)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var first = await SettleState.HeldAsync(db, keys, "k1");
        var bad = await SettleState.HeldAsync(db, keys, "k2") with { StreamId = id, Vanished = alreadyFound };
        var last = await SettleState.HeldAsync(db, keys, "k3");

        var answer = Record.Exception(() => Assert.Equal(2, ReleaseCall.Run(db, keys, ScriptState.Consumer, [first, bad, last], Retention)));

        // What Redis holds first: an error must not hide the hand-backs made before it. The bad one's real entry is
        // still pending here, so the trim keeps everything from it on.
        var entries = await SettleState.EntriesAsync(db, keys.Stream);
        Assert.Equal(4, entries.Length);
        Assert.StartsWith(bad.JobId + " ", entries[0], StringComparison.Ordinal);
        Assert.StartsWith(last.StreamId + " ", entries[1], StringComparison.Ordinal);
        Assert.EndsWith($" j={first.JobId} k=k1", entries[2], StringComparison.Ordinal);
        Assert.EndsWith($" j={last.JobId} k=k3", entries[3], StringComparison.Ordinal);
        var pending = await db.StreamPendingMessagesAsync(keys.Stream, RedisStreamKeys.Group, 10, RedisValue.Null);
        Assert.Equal([bad.JobId], pending.Select(p => (string)p.MessageId!));
        Assert.Equal(bad.JobId + "|" + bad.JobId, (string?)await db.StringGetAsync(keys.IdempotencyKey("k2")));
        Assert.False(await db.KeyExistsAsync(keys.JobLocation(bad.JobId)));
        Assert.Null(answer);
    }
}
