using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.Durable.Scripts;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// The settle scripts while the queue's slot migrates on Redis Cluster (one shared <see cref="RedisCluster"/>; each case
/// its own queue, so its own slot, left migrating): Redis runs a script on the source when every key in its KEYS is
/// there, and fails a command on a key the script builds itself (the job's record and pointer, the ended hash and
/// lists, the idempotency key) that the source lacks. A settle must then fail whole, before its first write, so that
/// the store's sending it again later is right.
/// </summary>
public sealed class DurableClusterSettleTests(RedisClusterFixture fixture, ITestOutputHelper output) : IClassFixture<RedisClusterFixture>, IAsyncDisposable
{
    private readonly List<ConnectionMultiplexer> _clients = [];

    public async ValueTask DisposeAsync()
    {
        foreach (var client in _clients)
        {
            await client.DisposeAsync();
        }
    }

    [Theory]
    [InlineData("scheduleRetry")]
    [InlineData("deadLetter")]
    [InlineData("settleCanceled")]
    [InlineData("postpone")]
    public async Task Settle_SlotMigratingAndTheJobsRecordNotOnTheSource_FailsBeforeItsFirstWrite(string script)
    {
        var cluster = fixture.Cluster;
        await using var client = await ConnectionMultiplexer.ConnectAsync(cluster.Configuration);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db, "migrating-" + script);
        var held = await SettleState.HeldAsync(db, keys, "key-1");

        // Every key the scripts are given exists on the source, so Redis runs them there.
        await db.SortedSetAddAsync(keys.Delayed, "another job's retry", 1);
        await db.StreamAddAsync(keys.Dead, "j", "another job's dead letter");
        int slot = await cluster.SlotOfAsync((string)keys.Stream!);
        var owner = await cluster.MasterOfAsync(slot);
        await cluster.StartMigratingAsync(slot, cluster.Masters.First(m => m != owner));

        object? answer = null;
        RedisException? error = null;
        try
        {
            answer = script switch
            {
                "deadLetter" => DeadLetterCall.Run(db, keys, ScriptState.Consumer, held, "boom", "poison", 60_000),
                "settleCanceled" => SettleCanceledCall.Run(db, keys, ScriptState.Consumer, held, 60_000),
                "scheduleRetry" => ScheduleRetryCall.Run(db, keys, ScriptState.Consumer, held, 60_000, "boom"),
                _ => PostponeCall.Run(db, keys, ScriptState.Consumer, held, 1_000),
            };
        }
        catch (RedisException ex)
        {
            error = ex;
        }

        long pending = await SettleState.PendingAsync(db, keys);
        long dead = await db.StreamLengthAsync(keys.Dead);
        string[] delayed = [.. (await db.SortedSetRangeByRankAsync(keys.Delayed)).Select(m => (string)m!)];
        Assert.True(
            error is not null,
            $"{script} answered {answer} during the migration: pending {pending}, dead letters {dead}, delayed [{string.Join(", ", delayed)}], " +
            $"key {(string?)await db.StringGetAsync(keys.IdempotencyKey("key-1")) ?? "missing"}");
        output.WriteLine(error.Message);
        Assert.Equal(1, pending);
        Assert.Equal(1, dead);
        Assert.Equal(["another job's retry"], delayed);
    }

    [Fact]
    public async Task Requeue_SlotMigratingAndTheKeyNotOnTheSource_FailsBeforeItsFirstWrite()
    {
        string deadId = string.Empty;
        var (db, keys) = await MigratingQueueAsync("migrating-requeue", async (db, keys) =>
            deadId = (string)(await db.StreamAddAsync(keys.Dead, [new("j", "1-1"), new("p", "{\"n\":1}"), new("k", "key-r")]))!);
        var before = await SettleState.EntriesAsync(db, keys.Stream);

        var error = Assert.ThrowsAny<RedisException>(() => RequeueCall.Run(db, keys, deadId, 100));

        output.WriteLine(error.Message);
        Assert.Equal(before, await SettleState.EntriesAsync(db, keys.Stream));
        Assert.Equal(2, await db.StreamLengthAsync(keys.Dead));
    }

    [Fact]
    public async Task Release_SlotMigratingAndTheJobsPointerNotOnTheSource_FailsBeforeItsFirstWrite()
    {
        SettledEntry held = default;
        var (db, keys) = await MigratingQueueAsync("migrating-release", async (db, keys) => held = await SettleState.HeldAsync(db, keys, "key-1"));
        var before = await SettleState.EntriesAsync(db, keys.Stream);

        long? answer = null;
        RedisException? error = null;
        try
        {
            answer = ReleaseCall.Run(db, keys, ScriptState.Consumer, [held], 60_000);
        }
        catch (RedisException ex)
        {
            error = ex;
        }

        var after = await SettleState.EntriesAsync(db, keys.Stream);
        Assert.True(
            error is not null,
            $"release answered {answer} during the migration: pending {await SettleState.PendingAsync(db, keys)}, entries [{string.Join(", ", after)}], " +
            $"pointer {(string?)await db.StringGetAsync(keys.JobLocation(held.JobId)) ?? "missing"}");
        output.WriteLine(error.Message);
        Assert.Equal(1, await SettleState.PendingAsync(db, keys));
        Assert.Equal(before, after);
    }

    [Fact]
    public async Task Cancel_SlotMigratingAndTheJobsRecordNotOnTheSource_FailsBeforeItsFirstWrite()
    {
        const string job = "s1000-1";
        const string member = job + "|1|1000|\u0001key-c\u0001{\"n\":1}";
        var (db, keys) = await MigratingQueueAsync("migrating-cancel", async (db, keys) =>
        {
            await db.HashSetAsync(keys.Scheduled, job, member);
            await db.SortedSetAddAsync(keys.Delayed, member, 4_000_000_000_000);
        });

        CancelReply? answer = null;
        RedisException? error = null;
        try
        {
            answer = CancelCall.Run(db, keys, job, 60_000, scheduledOnly: false);
        }
        catch (RedisException ex)
        {
            error = ex;
        }

        string[] delayed = [.. (await db.SortedSetRangeByRankAsync(keys.Delayed)).Select(m => (string)m!)];
        Assert.True(
            error is not null,
            $"cancel answered {answer} during the migration: scheduled {(string?)await db.HashGetAsync(keys.Scheduled, job) ?? "missing"}, delayed [{string.Join(", ", delayed)}]");
        output.WriteLine(error.Message);
        Assert.Equal(member, (string?)await db.HashGetAsync(keys.Scheduled, job));
        Assert.Contains(member, delayed);
    }

    [Fact]
    public async Task Reclaim_SlotMigratingAndAPoisonEntrysRecordNotOnTheSource_FailsBeforeItsFirstWrite()
    {
        var (db, keys) = await MigratingQueueAsync("migrating-reclaim", async (db, keys) => await SettleState.HeldAsync(db, keys, "key-1", consumer: "gone"));

        ReclaimReply? answer = null;
        RedisException? error = null;
        try
        {
            answer = ReclaimCall.Run(db, keys, ScriptState.Consumer, 0, "0-0", 10, maxDeliveries: 1, 60_000);
        }
        catch (RedisException ex)
        {
            error = ex;
        }

        var pending = await db.StreamPendingMessagesAsync(keys.Stream, RedisStreamKeys.Group, 10, RedisValue.Null);
        long dead = await db.StreamLengthAsync(keys.Dead);
        Assert.True(
            error is not null,
            $"reclaim answered (ended any: {answer?.EndedAny}) during the migration: pending {pending.Length}, dead letters {dead}");
        output.WriteLine(error.Message);
        Assert.Equal(1, dead);
        var entry = Assert.Single(pending);
        Assert.Equal("gone", (string?)entry.ConsumerName);
        Assert.Equal(1, entry.DeliveryCount);
    }

    [Fact]
    public async Task RoundEnqueue_SlotMigratingAndItsKeyNotOnTheSource_ThatEnqueueIsNotStored()
    {
        var (db, keys) = await MigratingQueueAsync("migrating-round-enqueue", (_, _) => Task.CompletedTask);
        var args = RoundArgs(keys, enqueues: 2, releases: 0, acks: 0);
        args.AddEnqueue("keyed", string.Empty, "key-e");
        args.AddEnqueue("plain", string.Empty, string.Empty);

        var reply = await RoundAsync(db, keys, args);

        string[] answers = [.. reply.EnqueueAnswers.Select(a => (string)a!)];
        string[] stored = [.. (await db.StreamRangeAsync(keys.Stream)).Select(e => (string)e["p"]!)];
        output.WriteLine(string.Join(", ", answers));
        Assert.True(
            answers[0].StartsWith(RoundReply.NotStoredPrefix),
            $"The keyed enqueue was answered {answers[0]} during the migration: stored [{string.Join(", ", stored)}], key {(string?)await db.StringGetAsync(keys.IdempotencyKey("key-e")) ?? "missing"}");
        Assert.DoesNotContain("keyed", stored);
        Assert.Contains("plain", stored);
        Assert.False(answers[1].StartsWith(RoundReply.NotStoredPrefix), answers[1]);
    }

    [Fact]
    public async Task RoundAcknowledgement_SlotMigratingAndTheEndedRecordsNotOnTheSource_NothingAcknowledged()
    {
        SettledEntry held = default;
        var (db, keys) = await MigratingQueueAsync("migrating-round-ack", async (db, keys) => held = await SettleState.RetriedHeldAsync(db, keys, "key-a"));
        var args = RoundArgs(keys, enqueues: 0, releases: 1, acks: 1);
        args.AddRelease("key-a", held.JobId, held.StreamId);
        args.AddAck(held.StreamId, held.JobId, held.Attempt, held.EnqueuedAtMs, held.StartedAtMs, cancelRequested: false);

        var reply = await RoundAsync(db, keys, args);

        long pending = await SettleState.PendingAsync(db, keys);
        Assert.True(
            !reply.AcksApplied,
            $"The acknowledgement was applied during the migration: pending {pending}, ended record {(string?)await db.HashGetAsync(keys.EndedRecords, held.JobId) ?? "missing"}, " +
            $"key {(string?)await db.StringGetAsync(keys.IdempotencyKey("key-a")) ?? "missing"}, error {reply.AckError}");
        Assert.NotNull(reply.AckError);
        output.WriteLine(reply.AckError);
        Assert.Equal(1, pending);
    }

    [Fact]
    public async Task RoundFetch_SlotMigratingAndADueRetrysKeyAndPointerNotOnTheSource_NothingPromoted()
    {
        const string job = "1-1";
        const string member = job + "|2|1000|\u0001key-f\u0001{\"n\":1}";
        var (db, keys) = await MigratingQueueAsync("migrating-round-fetch", (db, keys) => db.SortedSetAddAsync(keys.Delayed, member, 0));
        string[] delayedBefore = [.. (await db.SortedSetRangeByRankAsync(keys.Delayed)).Select(m => (string)m!)];
        var args = RoundArgs(keys, enqueues: 0, releases: 0, acks: 0, fetch: 10);

        var reply = await RoundAsync(db, keys, args);

        string[] delayed = [.. (await db.SortedSetRangeByRankAsync(keys.Delayed)).Select(m => (string)m!)];
        string[] streamed = [.. (await db.StreamRangeAsync(keys.Stream)).Select(e => (string?)e["j"] ?? "-")];
        Assert.True(
            reply.FetchError is not null,
            $"The due retry was promoted during the migration: stream jobs [{string.Join(", ", streamed)}], delayed [{string.Join(", ", delayed)}], " +
            $"pointer {(string?)await db.StringGetAsync(keys.JobLocation(job)) ?? "missing"}, key {(string?)await db.StringGetAsync(keys.IdempotencyKey("key-f")) ?? "missing"}");
        output.WriteLine(reply.FetchError);
        Assert.DoesNotContain(job, streamed);
        Assert.Equal(delayedBefore, delayed);
        Assert.Equal(1, await db.StreamLengthAsync(keys.Dead));
    }

    [Fact]
    public async Task Errors_OfAMigratingSlot_AreWhatTheStoreRetriesSoonAfter()
    {
        SettledEntry held = default;
        const string member = "1-1|2|1000|\u0001key-b\u0001{\"n\":1}";
        var (db, keys) = await MigratingQueueAsync("migrating-errors", async (db, keys) =>
        {
            held = await SettleState.HeldAsync(db, keys, "key-1");
            await db.SortedSetAddAsync(keys.Delayed, member, 0);
        });
        var messages = new List<string?>();

        // A whole script's error, as a stage sees it.
        messages.Add(Assert.ThrowsAny<RedisException>(() => ScheduleRetryCall.Run(db, keys, ScriptState.Consumer, held, 60_000, "boom")).Message);

        // A round's parts: the fetch's error, and a keyed enqueue's ?{why} with the enqueue part's error.
        var args = RoundArgs(keys, enqueues: 1, releases: 0, acks: 0, fetch: 10);
        args.AddEnqueue("keyed", string.Empty, "key-e");
        var reply = await RoundAsync(db, keys, args);
        string answer = (string)reply.EnqueueAnswers[0]!;
        Assert.StartsWith(RoundReply.NotStoredPrefix.ToString(), answer);
        messages.Add(answer[1..]);
        messages.Add(reply.EnqueueError);
        messages.Add(reply.FetchError);

        // A command on several keys of the slot, some of them not on the node.
        messages.Add(Assert.ThrowsAny<RedisException>(() => db.StringGet([keys.Ids, keys.IdempotencyKey("key-m")])).Message);

        foreach (string? message in messages)
        {
            output.WriteLine(message ?? "(none)");
        }

        Assert.All(messages, m => Assert.True(PassBackoff.IsSlotMoving(m), $"Not taken for a slot on the move: {m ?? "(none)"}"));
    }

    /// <summary>
    /// A new queue whose state <paramref name="write"/> writes, with every key the scripts are given (its KEYS) made to
    /// exist, so that Redis runs them on the source, then its slot set MIGRATING to another master, no key moved.
    /// </summary>
    private async Task<(IDatabase Db, RedisStreamKeys Keys)> MigratingQueueAsync(string queue, Func<IDatabase, RedisStreamKeys, Task> write)
    {
        var cluster = fixture.Cluster;
        var client = await ConnectionMultiplexer.ConnectAsync(cluster.Configuration);
        _clients.Add(client);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db, queue);
        await write(db, keys);
        await db.SortedSetAddAsync(keys.Delayed, "another job's retry", 1);
        await db.StreamAddAsync(keys.Dead, "j", "another job's dead letter");
        await db.HashSetAsync(keys.Scheduled, "another job", "x");
        await db.HashSetAsync(keys.Recurring, "another job", "1");
        await db.StringSetAsync(keys.Ids, 1);
        int slot = await cluster.SlotOfAsync((string)keys.Stream!);
        var owner = await cluster.MasterOfAsync(slot);
        await cluster.StartMigratingAsync(slot, cluster.Masters.First(m => m != owner));
        return (db, keys);
    }

    private static RoundArguments RoundArgs(RedisStreamKeys keys, int enqueues, int releases, int acks, int fetch = 0)
    {
        var args = new RoundArguments(enqueues, false, releases, plainAcks: 0, acks, recordsKept: true);
        args.SetSettings(RedisStreamKeys.Group, ScriptState.Consumer, 1_000, keys.NudgeName, fetch, 256, 0, 600_000, 10_000, trim: false);
        args.NudgeTag = "c|1";
        return args;
    }

    private static async Task<RoundReply> RoundAsync(IDatabase db, RedisStreamKeys keys, RoundArguments args) =>
        new((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, [keys.Stream, keys.Delayed, keys.Scheduled, keys.Recurring, keys.Ids, keys.Epoch], args.Values))!);
}
