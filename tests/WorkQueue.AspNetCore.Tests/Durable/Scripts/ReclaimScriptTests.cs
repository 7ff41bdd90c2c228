using System.Globalization;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>reclaim.lua called directly through <see cref="ReclaimCall"/>, on a real redis-server.</summary>
public sealed class ReclaimScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    /// <summary>Far above a live consumer's entry, below a dead one's (<see cref="PendingState.DeadIdleMs"/>).</summary>
    private const long MinIdleMs = 100_000_000;

    private const long Retention = 60_000;

    private const string Poison = "Delivered {0} times without completing (its consumers stopped or crashed each time): treated as poison.";

    [Fact]
    public async Task Reclaim_DeadConsumersEntries_ClaimedWithADeliveryCountedAndTheLiveOnesUntouched()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string epoch = await PendingState.EpochAsync(db, keys);
        string e1 = await PendingState.AddAsync(db, keys, "{\"n\":1}", "key-1");
        string e2 = await PendingState.AddAsync(db, keys, "{\"n\":2}");
        string live = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys, 2, "dead");
        await ScriptState.DeliverAsync(db, keys, 1, "live");
        await PendingState.MakeIdleAsync(db, keys, "dead", e1);
        await PendingState.MakeIdleAsync(db, keys, "dead", e2);

        var reply = ReclaimCall.Run(db, keys, "c1", MinIdleMs, "0-0", 10, 5, Retention);

        Assert.Equal(("0-0", false, false, epoch), (reply.Cursor, reply.EndedAny, reply.IdleWaiting, reply.Epoch));
        Assert.Equal(
            [(e1, "{\"n\":1}", "key-1", 2L), (e2, "{\"n\":2}", null, 2L)],
            reply.Claimed.Select(static e => (e.StreamId, e.Payload, e.IdempotencyKey, e.Deliveries)));
        Assert.Equal(("c1", 2L), Holder(await PendingState.PendingAsync(db, keys, e1)));
        Assert.Equal(("c1", 2L), Holder(await PendingState.PendingAsync(db, keys, e2)));
        Assert.Equal(("live", 1L), Holder(await PendingState.PendingAsync(db, keys, live)));

        // Nothing ended: every entry still in the stream, no dead letter, no record.
        Assert.Equal([e1, e2, live], (await db.StreamRangeAsync(keys.Stream)).Select(static e => (string)e.Id!));
        Assert.Equal(["epoch", "stream"], await PendingState.KeyNamesAsync(db, keys));
    }

    [Fact]
    public async Task Reclaim_MoreIdleEntriesThanRoom_TakesThatManyAndGoesOnFromTheCursor()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string[] ids = [await PendingState.AddAsync(db, keys), await PendingState.AddAsync(db, keys), await PendingState.AddAsync(db, keys)];
        await ScriptState.DeliverAsync(db, keys, 3, "dead");
        foreach (string id in ids)
        {
            await PendingState.MakeIdleAsync(db, keys, "dead", id);
        }

        var first = ReclaimCall.Run(db, keys, "c1", MinIdleMs, "0-0", 1, 5, Retention);
        var rest = ReclaimCall.Run(db, keys, "c1", MinIdleMs, first.Cursor, 5, 5, Retention);

        Assert.Equal([ids[0]], first.Claimed.Select(static e => e.StreamId));
        Assert.Equal(ids[1], first.Cursor);
        Assert.Equal([ids[1], ids[2]], rest.Claimed.Select(static e => e.StreamId));
        Assert.Equal("0-0", rest.Cursor);
    }

    [Fact]
    public async Task Reclaim_PastMaxDeliveries_DeadLettersThePoisonFreesItsKeyAndTrimsIt()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string poison = await PendingState.AddAsync(db, keys, "{\"n\":1}", "key-1");
        await db.StringSetAsync(keys.IdempotencyKey("key-1"), poison + "|" + poison);
        await ScriptState.DeliverAsync(db, keys, 1, "dead");
        string queued = await PendingState.AddAsync(db, keys);
        await PendingState.MakeIdleAsync(db, keys, "dead", poison, deliveries: 3);

        var reply = ReclaimCall.Run(db, keys, "c1", MinIdleMs, "0-0", 10, 3, Retention);

        Assert.Empty(reply.Claimed);
        Assert.True(reply.EndedAny);
        var dead = Assert.Single(await db.StreamRangeAsync(keys.Dead));
        var fields = dead.Values.ToDictionary(static v => (string)v.Name!, static v => (string)v.Value!);
        string at = fields["f"];
        Assert.Matches(@"^\d+$", at);
        string error = string.Format(CultureInfo.InvariantCulture, Poison, 4);
        Assert.Equal(
            new Dictionary<string, string> { ["j"] = poison, ["p"] = "{\"n\":1}", ["a"] = "1", ["t"] = "1000", ["e"] = error, ["r"] = "poison", ["f"] = at, ["c"] = "c1", ["k"] = "key-1" },
            fields);

        // Acknowledged and trimmed (nothing pending before the queued entry), its key freed, its record ended.
        Assert.Null(await PendingState.PendingAsync(db, keys, poison));
        Assert.Equal([queued], (await db.StreamRangeAsync(keys.Stream)).Select(static e => (string)e.Id!));
        Assert.Equal(1, Assert.Single(await db.StreamGroupInfoAsync(keys.Stream)).Lag);
        Assert.Equal($"D\u001f\u001f{at}\u001f1\u001f1000\u001fc1\u001f\u001f{error}", (string?)await db.HashGetAsync(keys.EndedRecords, poison));
        Assert.Equal(double.Parse(at, CultureInfo.InvariantCulture), await db.SortedSetScoreAsync(keys.DeadLettered, poison));
        Assert.Equal(["dead", "ended", "ended:D", "epoch", "stream"], await PendingState.KeyNamesAsync(db, keys));
    }

    [Fact]
    public async Task Reclaim_RetriedJobPastMaxDeliveries_EndsTheJobUnderItsOwnIdWithItsHistory()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var (e1, e2) = await ScriptState.RetriedAsync(db, keys, "key-2");
        Assert.Equal([e2], await ScriptState.DeliverAsync(db, keys, 1, "dead"));
        await PendingState.MakeIdleAsync(db, keys, "dead", e2, deliveries: 10);

        var reply = ReclaimCall.Run(db, keys, "c1", MinIdleMs, "0-0", 10, 10, Retention);

        Assert.True(reply.EndedAny);
        Assert.Equal(e1, (string?)Assert.Single(await db.StreamRangeAsync(keys.Dead))["j"]);
        string record = (string)(await db.HashGetAsync(keys.EndedRecords, e1))!;
        Assert.StartsWith("D\u001f\u001f", record, StringComparison.Ordinal);
        Assert.Contains("\u001f2\u001f1000\u001fc1\u001f\u001fDelivered 11 times", record, StringComparison.Ordinal);
        Assert.EndsWith("\u001e1\u001fc1\u001f1001\u001f1002\u001fR\u001fboom", record, StringComparison.Ordinal);
        Assert.False(await db.HashExistsAsync(keys.EndedRecords, e2));
        foreach (var name in new[] { keys.JobRecord(e1), keys.JobLocation(e1), keys.IdempotencyKey("key-2") })
        {
            Assert.False(await db.KeyExistsAsync(name), $"{name} is left");
        }
    }

    [Fact]
    public async Task Reclaim_CancelAskedWhileItsConsumerDied_EndsTheJobAsCanceled()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string id = await PendingState.AddAsync(db, keys, "{}", "key-3");
        await db.StringSetAsync(keys.IdempotencyKey("key-3"), id + "|" + id);
        await ScriptState.DeliverAsync(db, keys, 1, "dead");
        await PendingState.MakeIdleAsync(db, keys, "dead", id);

        // As cancel.lua marks a running job that had no record yet.
        await db.StringSetAsync(keys.JobRecord(id), "r\u001f1\u001f\u001f1\u001f1000\u001f\u001f\u001f", TimeSpan.FromDays(1));

        var reply = ReclaimCall.Run(db, keys, "c1", MinIdleMs, "0-0", 10, 5, Retention);

        Assert.Empty(reply.Claimed);
        Assert.True(reply.EndedAny);
        Assert.Null(await PendingState.PendingAsync(db, keys, id));
        Assert.Equal(0, await db.StreamLengthAsync(keys.Dead));
        string record = (string)(await db.HashGetAsync(keys.EndedRecords, id))!;
        string at = record.Split('\u001f')[2];
        Assert.Equal($"C\u001f1\u001f{at}\u001f1\u001f1000\u001fc1\u001f\u001f", record);
        Assert.Equal(double.Parse(at, CultureInfo.InvariantCulture), await db.SortedSetScoreAsync(keys.Canceled, id));
        Assert.Equal(["ended", "ended:C", "epoch", "stream"], await PendingState.KeyNamesAsync(db, keys));
    }

    [Fact]
    public async Task Reclaim_CountZero_OnlyLooksWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string id = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys, 1, "dead");
        await PendingState.MakeIdleAsync(db, keys, "dead", id, deliveries: 9);
        string before = await ScriptState.SnapshotAsync(db, keys);

        var idle = ReclaimCall.Run(db, keys, "c1", MinIdleMs, "5-0", 0, 3, Retention);
        var none = ReclaimCall.Run(db, keys, "c1", PendingState.DeadIdleMs * 10, "5-0", 0, 3, Retention);

        Assert.Equal(("5-0", true, false, string.Empty), (idle.Cursor, idle.IdleWaiting, idle.EndedAny, idle.Epoch));
        Assert.Empty(idle.Claimed);
        Assert.False(none.IdleWaiting);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task Reclaim_EntryDeletedWhilePending_DroppedFromThePendingListAndNotClaimed()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string deleted = await PendingState.AddAsync(db, keys);
        string kept = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys, 2, "dead");
        await PendingState.MakeIdleAsync(db, keys, "dead", deleted);
        await PendingState.MakeIdleAsync(db, keys, "dead", kept);
        await db.StreamDeleteAsync(keys.Stream, [deleted]);

        var reply = ReclaimCall.Run(db, keys, "c1", MinIdleMs, "0-0", 10, 5, Retention);

        Assert.Equal([kept], reply.Claimed.Select(static e => e.StreamId));
        Assert.False(reply.EndedAny);
        Assert.Null(await PendingState.PendingAsync(db, keys, deleted));
        Assert.Equal(1, (await db.StreamPendingAsync(keys.Stream, RedisStreamKeys.Group)).PendingMessageCount);
    }

    [Theory]
    [InlineData("")]
    [InlineData("a|b")]
    [InlineData("\u0001k\u0001")]
    [InlineData("\u001f\u001e")]
    [InlineData("{q}:stream")]
    public async Task Reclaim_PoisonWithHostileKeyAndHugePayload_DeadLettersThemVerbatimAndFreesOnlyItsKey(string key)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string payload = "{\"s\":\"" + new string('x', 1 << 20) + "|\u0001\u001f\u001e\"}";
        string id = await PendingState.AddAsync(db, keys, payload, key);
        await db.StringSetAsync(keys.IdempotencyKey(key), id + "|" + id);
        await db.StringSetAsync(keys.IdempotencyKey(key + "x"), id + "|" + id);
        await db.StringSetAsync(keys.IdempotencyKey("other"), "9-9|9-9");
        await ScriptState.DeliverAsync(db, keys, 1, "dead");
        await PendingState.MakeIdleAsync(db, keys, "dead", id, deliveries: 5);

        var reply = ReclaimCall.Run(db, keys, "c1", MinIdleMs, "0-0", 10, 5, Retention);

        Assert.True(reply.EndedAny);
        var dead = Assert.Single(await db.StreamRangeAsync(keys.Dead));
        Assert.Equal((payload, key), ((string?)dead["p"], (string?)dead["k"]));

        // An empty key names no key (none is freed); any other is freed only by its own name.
        Assert.Equal(key.Length == 0, await db.KeyExistsAsync(keys.IdempotencyKey(key)));
        Assert.Equal(id + "|" + id, (string?)await db.StringGetAsync(keys.IdempotencyKey(key + "x")));
        Assert.Equal("9-9|9-9", (string?)await db.StringGetAsync(keys.IdempotencyKey("other")));
    }

    [Theory]
    [InlineData("nope", "0-0", "10")]
    [InlineData("100000000", "nope", "10")]
    [InlineData("100000000", "0-0", "nope")]
    [InlineData("100000000", "0-0", "-1")]
    [InlineData("100000000", "99999999999999999999999-0", "10")]
    public async Task Reclaim_MalformedScanArgument_FailsWithRedisErrorWithoutWriting(string minIdle, string cursor, string count)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string id = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys, 1, "dead");
        await PendingState.MakeIdleAsync(db, keys, "dead", id, deliveries: 5);
        string before = await ScriptState.SnapshotAsync(db, keys);

        Assert.Throws<RedisServerException>(() => db.ScriptEvaluate(DurableScripts.Reclaim, ReclaimCall.Keys(keys), [RedisStreamKeys.Group, "c1", minIdle, cursor, count, 3, Retention]));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task Reclaim_StreamKeyOfAnotherType_FailsWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");
        await db.StringSetAsync(keys.Stream, "not a stream");
        string before = await ScriptState.SnapshotAsync(db, keys);

        var error = Assert.Throws<RedisServerException>(() => ReclaimCall.Run(db, keys, "c1", MinIdleMs, "0-0", 10, 5, Retention));

        Assert.Contains("WRONGTYPE", error.Message, StringComparison.Ordinal);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task Reclaim_EpochKeyOfAnotherType_ClaimsUnderNoEpochAndLeavesTheKey()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string id = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys, 1, "dead");
        await PendingState.MakeIdleAsync(db, keys, "dead", id);
        await db.KeyDeleteAsync(keys.Epoch);
        await db.HashSetAsync(keys.Epoch, "f", "v");

        var reply = ReclaimCall.Run(db, keys, "c1", MinIdleMs, "0-0", 10, 5, Retention);

        Assert.Equal([id], reply.Claimed.Select(static e => e.StreamId));
        Assert.Equal(string.Empty, reply.Epoch);
        Assert.Equal([new HashEntry("f", "v")], await db.HashGetAllAsync(keys.Epoch));
    }

    [Theory]
    [InlineData("nope", "60000")]
    [InlineData("", "60000")]
    [InlineData("3", "nope")]
    [InlineData("3", "")]
    public async Task Reclaim_MalformedMaxDeliveriesOrRetention_FailsBeforeClaimingOrEndingAny(string maxDeliveries, string retention)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string id = await PendingState.AddAsync(db, keys, "{}", "key-4");
        await db.StringSetAsync(keys.IdempotencyKey("key-4"), id + "|" + id);
        await ScriptState.DeliverAsync(db, keys, 1, "dead");
        await PendingState.MakeIdleAsync(db, keys, "dead", id, deliveries: 5);
        string before = await ScriptState.SnapshotAsync(db, keys);

        // Read before XAUTOCLAIM claims: after it, an error would leave the entry claimed (a delivery counted) or
        // dead-lettered, its key freed, with nobody told.
        Assert.Throws<RedisServerException>(() => db.ScriptEvaluate(DurableScripts.Reclaim, ReclaimCall.Keys(keys), [RedisStreamKeys.Group, "c1", MinIdleMs, "0-0", 10, maxDeliveries, retention]));
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task Reclaim_DeadLettersKeyOfAnotherType_FailsBeforeClaimingAny()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string poison = await PendingState.AddAsync(db, keys);
        string other = await PendingState.AddAsync(db, keys);
        await ScriptState.DeliverAsync(db, keys, 2, "dead");
        await PendingState.MakeIdleAsync(db, keys, "dead", poison, deliveries: 5);
        await PendingState.MakeIdleAsync(db, keys, "dead", other);
        await db.StringSetAsync(keys.Dead, "not a stream");
        string before = await ScriptState.SnapshotAsync(db, keys);

        var error = Assert.Throws<RedisServerException>(() => ReclaimCall.Run(db, keys, "c1", MinIdleMs, "0-0", 10, 3, Retention));

        Assert.Contains("WRONGTYPE", error.Message, StringComparison.Ordinal);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    private static (string Consumer, long Deliveries) Holder((string Consumer, long Deliveries, long IdleMs)? pending) =>
        pending is { } p ? (p.Consumer, p.Deliveries) : default;
}
