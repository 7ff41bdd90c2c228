using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>
/// The round script (<c>Durable/Scripts/round.lua</c>) called directly with crafted arguments: every element is read
/// before the first write, an element the script cannot read or a key of another type fails only the elements it
/// concerns, and the reply says exactly what Redis holds (each enqueue answered not stored has no entry, each answered
/// with an id has one; acknowledgements reported applied are acknowledged).
/// </summary>
public sealed class RoundScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const string Consumer = "c";

    [Fact]
    public async Task Enqueue_UnreadableElementsAmongGoodOnes_EachFailsAlone_TheOthersAreStored()
    {
        var (db, keys) = await NewQueueAsync();
        (string Spec, string Key)[] batch =
        [
            ("", ""), ("dX", ""), ("", "k1"), ("a12x", ""), ("d60000", ""), ("r1|bad", ""), ("", ""), ("q", ""),
            ("", "bad\u0001key"), ("a1", ""), ("d1234567890123456", ""), ("", ""),
        ];

        var reply = await RoundAsync(db, keys, enqueues: batch);

        string[] answers = Answers(reply);
        bool[] bad = [false, true, false, true, false, true, false, true, true, false, true, false];
        Assert.Equal(batch.Length, answers.Length);
        Assert.All(Enumerable.Range(0, batch.Length), i => Assert.Equal(bad[i], answers[i].StartsWith('?')));
        Assert.True(reply.EnqueueError is null, $"Unreadable elements are not the part's error: {reply.EnqueueError}.");
        await AssertStoredAsExactlyAnsweredAsync(db, keys, batch.Select((_, i) => $"p{i}").ToArray(), answers);
    }

    [Fact]
    public async Task Enqueue_RecurringHashOfAnotherType_RefusesTheRecurringOffersOnly()
    {
        var (db, keys) = await NewQueueAsync();
        await db.StringSetAsync(keys.Recurring, "not a hash");
        long fire = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        (string, string)[] batch = [("", ""), ($"r{fire}|* * * * *|job", ""), ("", ""), ("d60000", "")];

        var reply = await RoundAsync(db, keys, enqueues: batch);

        string[] answers = Answers(reply);
        Assert.StartsWith("?WRONGTYPE", answers[1], StringComparison.Ordinal);
        Assert.All(new[] { 0, 2, 3 }, i => Assert.False(answers[i].StartsWith('?'), answers[i]));
        Assert.NotNull(reply.EnqueueError);
        await AssertStoredAsExactlyAnsweredAsync(db, keys, ["p0", "p1", "p2", "p3"], answers);
    }

    [Fact]
    public async Task Enqueue_ScheduledHashOfAnotherType_RefusesTheDelayedOnes_BeforeAnyOfTheirWrites()
    {
        var (db, keys) = await NewQueueAsync();
        await db.StringSetAsync(keys.Scheduled, "not a hash");

        var reply = await RoundAsync(db, keys, enqueues: [("", ""), ("d60000", "held"), ("", "")]);

        string[] answers = Answers(reply);
        Assert.StartsWith("?WRONGTYPE", answers[1], StringComparison.Ordinal);
        Assert.Equal(0, await db.SortedSetLengthAsync(keys.Delayed));
        Assert.False(await db.KeyExistsAsync(keys.Ids));
        Assert.False(await db.KeyExistsAsync(keys.IdempotencyKey("held")));
        await AssertStoredAsExactlyAnsweredAsync(db, keys, ["p0", "p1", "p2"], answers);
    }

    [Fact]
    public async Task Enqueue_IdCounterThatIsNoInteger_RefusesTheDelayedOnes_TheOthersAreStored()
    {
        var (db, keys) = await NewQueueAsync();
        await db.StringSetAsync(keys.Ids, "garbage");

        var reply = await RoundAsync(db, keys, enqueues: [("d60000", ""), ("", ""), ("a99999999999999", ""), ("", "")]);

        string[] answers = Answers(reply);
        Assert.True(answers[0].StartsWith('?') && answers[2].StartsWith('?'), string.Join(", ", answers));
        await AssertStoredAsExactlyAnsweredAsync(db, keys, ["p0", "p1", "p2", "p3"], answers);
    }

    [Fact]
    public async Task Enqueue_RecurringClaimHoldingNoTime_RefusesThatOfferAlone()
    {
        var (db, keys) = await NewQueueAsync();
        await db.HashSetAsync(keys.Recurring, "@job", "1|c|* * * * *|* * * * *");
        long fire = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        await db.HashSetAsync(keys.Recurring, "job", "garbage");

        var reply = await RoundAsync(db, keys, enqueues: [("", ""), ($"r{fire}|* * * * *|job", ""), ("", "")]);

        string[] answers = Answers(reply);
        Assert.StartsWith("?", answers[1], StringComparison.Ordinal);
        Assert.Equal("garbage", (string?)await db.HashGetAsync(keys.Recurring, "job"));
        await AssertStoredAsExactlyAnsweredAsync(db, keys, ["p0", "p1", "p2"], answers);
    }

    [Fact]
    public async Task Enqueue_DelayedSetOfAnotherType_EveryEnqueueAnsweredNotStored_AndTheAcknowledgementsStillApplied()
    {
        var (db, keys) = await NewQueueAsync();
        string[] ids = await DeliverAsync(db, keys, 2);
        var other = new RedisStreamKeys(DurableTestHost.NewPrefix(), "other");
        await db.StringSetAsync(other.Delayed, "not a set");

        // The acknowledgements are for the first queue's stream; the enqueues find the second queue's delayed set a string.
        var reply = await RoundAsync(db, keys, enqueues: [("", ""), ("", "")], acks: ids, roundKeys: [keys.Stream, other.Delayed, keys.Scheduled, keys.Recurring, keys.Ids, keys.Epoch]);

        Assert.All(Answers(reply), a => Assert.StartsWith("?WRONGTYPE", a, StringComparison.Ordinal));
        Assert.True(reply.AcksApplied);
        Assert.Equal(0, (await db.StreamPendingAsync(keys.Stream, RedisStreamKeys.Group)).PendingMessageCount);
        Assert.DoesNotContain(await db.StreamRangeAsync(keys.Stream), e => ((string?)e["p"])?.StartsWith('p') == true);
    }

    [Fact]
    public async Task Enqueue_OutOfMemory_NothingIsStoredAndEachIsToldSo_TheAcknowledgementsAreApplied()
    {
        await using var server = await RedisServer.StartAsync();
        await using var client = await DurableTestHost.ConnectAsync(server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "oom");
        await db.StreamCreateConsumerGroupAsync(keys.Stream, RedisStreamKeys.Group, StreamPosition.Beginning, createStream: true);
        string[] ids = await DeliverAsync(db, keys, 3);
        var admin = client.GetServer(client.GetEndPoints()[0]);
        await admin.ExecuteAsync("CONFIG", "SET", "maxmemory-policy", "noeviction");
        await admin.ExecuteAsync("CONFIG", "SET", "maxmemory", "1");
        RoundReply reply;
        try
        {
            reply = await RoundAsync(db, keys, enqueues: [("", ""), ("", "k"), ("d1000", "")], acks: ids);
        }
        finally
        {
            await admin.ExecuteAsync("CONFIG", "SET", "maxmemory", "0");
        }

        Assert.All(Answers(reply), a => Assert.StartsWith("?OOM", a, StringComparison.Ordinal));
        Assert.StartsWith("OOM", reply.EnqueueError, StringComparison.Ordinal);
        Assert.True(reply.AcksApplied, $"The acknowledgements were refused: {reply.AckError}.");
        Assert.Equal(0, (await db.StreamPendingAsync(keys.Stream, RedisStreamKeys.Group)).PendingMessageCount);
        Assert.Equal(0, await db.SortedSetLengthAsync(keys.Delayed));
        Assert.False(await db.KeyExistsAsync(keys.IdempotencyKey("k")));
        Assert.DoesNotContain(await db.StreamRangeAsync(keys.Stream), e => ((string?)e["p"])?.StartsWith('p') == true);
    }

    [Fact]
    public async Task Acknowledge_UnreadableElements_LeftOutAndNamed_TheOthersApplied()
    {
        var (db, keys) = await NewQueueAsync();
        string[] ids = await DeliverAsync(db, keys, 3);
        var args = new RoundArguments(0, false, releases: 0, plainAcks: 2, acks: 3, recordsKept: true);
        args.SetSettings(RedisStreamKeys.Group, Consumer, 1_000, keys.NudgeName, 0, 256, 0, 600_000, 10_000, trim: false);
        args.AddPlainAck(ids[0], 1_700_000_000_000, 1_700_000_000_100);
        args.AddPlainAck("not-an-id", 1_700_000_000_000, 1_700_000_000_100);
        args.AddAck(ids[1], ids[1], 1, 1_700_000_000_000, 1_700_000_000_100, cancelRequested: false);
        args.AddAck(ids[2], "job\u0001", 1, 1_700_000_000_000, 1_700_000_000_100, cancelRequested: false);
        args.AddAck("1-1", "1-1", 0, 1_700_000_000_000, 1_700_000_000_100, cancelRequested: false);
        args.Values[^3] = "soon";

        var reply = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, RoundKeys(keys), args.Values))!);

        Assert.True(reply.AcksApplied, $"The acknowledgements were refused: {reply.AckError}.");
        Assert.Equal(new[] { 2L, 4L, 5L }, reply.InvalidAcks.Select(p => (long)p).ToArray());
        var pending = await db.StreamPendingMessagesAsync(keys.Stream, RedisStreamKeys.Group, 10, RedisValue.Null);
        Assert.Equal(ids[2], (string?)pending.Single().MessageId);
        Assert.Equal(2, await db.SortedSetLengthAsync(keys.Succeeded));
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Acknowledge_IdsPastTheStreamIdRange_LeftOutAndNamed_TheOthersApplied(bool recordsKept)
    {
        // Digits and a dash, but past 2^64 - 1: XACK refuses the id, and with it every id of its call. Each section reads
        // ids by includes/entryId.lua's grammar, so such an element is left out alone (with or without records).
        var (db, keys) = await NewQueueAsync();
        string[] ids = await DeliverAsync(db, keys, 2);
        var args = new RoundArguments(0, false, releases: 0, plainAcks: 2, acks: 2, recordsKept);
        args.SetSettings(RedisStreamKeys.Group, Consumer, 1_000, keys.NudgeName, 0, 256, 0, recordsKept ? 600_000 : 0, 10_000, trim: false);
        args.AddPlainAck(ids[0], 1_700_000_000_000, 1_700_000_000_100);
        args.AddPlainAck("18446744073709551616-0", 1_700_000_000_000, 1_700_000_000_100);
        args.AddAck(ids[1], ids[1], 2, 1_700_000_000_000, 1_700_000_000_100, cancelRequested: false);
        args.AddAck("1-99999999999999999999", "1-99999999999999999999", 2, 1_700_000_000_000, 1_700_000_000_100, cancelRequested: false);

        var reply = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, RoundKeys(keys), args.Values))!);

        Assert.True(reply.AcksApplied, $"The acknowledgements were refused: {reply.AckError}.");
        Assert.Equal(new[] { 2L, 4L }, reply.InvalidAcks.Select(p => (long)p).ToArray());
        Assert.Equal(0, (await db.StreamPendingAsync(keys.Stream, RedisStreamKeys.Group)).PendingMessageCount);
    }

    [Fact]
    public async Task Acknowledge_PlainElementsWithFieldsOnlyTheirOwnCheckRejects_LeftOutAndNamed()
    {
        // A comma inside a field, or a field that would pass as its neighbour, is left out alone (the plain section was
        // once checked at once, joined by commas; acknowledge.lua now reads each element).
        var (db, keys) = await NewQueueAsync();
        string[] ids = await DeliverAsync(db, keys, 4);
        var args = new RoundArguments(0, false, releases: 0, plainAcks: 5, acks: 0, recordsKept: true);
        args.SetSettings(RedisStreamKeys.Group, Consumer, 1_000, keys.NudgeName, 0, 256, 0, 600_000, 10_000, trim: false);
        args.AddPlainAck(ids[0], 1_700_000_000_000, 1_700_000_000_100);
        args.AddPlainAck(ids[1], 1_700_000_000_000, 1_700_000_000_100);
        args.AddPlainAck(ids[2], 1_700_000_000_000, 1_700_000_000_100);
        args.AddPlainAck(ids[3], 1_700_000_000_000, RedisValue.EmptyString);
        args.AddPlainAck("1-1", 1_700_000_000_000, 1_700_000_000_100);
        args.Values[^14] = "1700000000000,1-1";
        args.Values[^10] = "1-2";
        args.Values[^3] = "17";

        var reply = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, RoundKeys(keys), args.Values))!);

        Assert.True(reply.AcksApplied, $"The acknowledgements were refused: {reply.AckError}.");
        Assert.Equal(new[] { 1L, 2L, 5L }, reply.InvalidAcks.Select(p => (long)p).ToArray());
        var pending = await db.StreamPendingMessagesAsync(keys.Stream, RedisStreamKeys.Group, 10, RedisValue.Null);
        Assert.Equal(new[] { ids[0], ids[1] }, pending.Select(p => (string?)p.MessageId).ToArray());
        Assert.Equal(2, await db.SortedSetLengthAsync(keys.Succeeded));
    }

    [Fact]
    public async Task Acknowledge_PlainElementsSharingATimesText_EachFieldReadByItsOwnRule()
    {
        // acknowledge.lua matches a time only when it differs from the last one of its field that read well: an empty
        // started-at reads well, an empty enqueued-at right after it does not; a malformed text is refused in either field.
        var (db, keys) = await NewQueueAsync();
        string[] ids = await DeliverAsync(db, keys, 5);
        var args = new RoundArguments(0, false, releases: 0, plainAcks: 5, acks: 0, recordsKept: true);
        args.SetSettings(RedisStreamKeys.Group, Consumer, 1_000, keys.NudgeName, 0, 256, 0, 600_000, 10_000, trim: false);
        args.AddPlainAck(ids[0], 1_700_000_000_000, RedisValue.EmptyString);
        args.AddPlainAck(ids[1], 1_700_000_000_000, 1_700_000_000_100);
        args.AddPlainAck(ids[2], 1_700_000_000_000, 1_700_000_000_100);
        args.AddPlainAck(ids[3], 1_700_000_000_000, 1_700_000_000_100);
        args.AddPlainAck(ids[4], 1_700_000_000_000, 1_700_000_000_100);
        args.Values[^11] = RedisValue.EmptyString;
        args.Values[^8] = "x1";
        args.Values[^7] = "1";
        args.Values[^5] = "1";
        args.Values[^4] = "x1";

        var reply = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, RoundKeys(keys), args.Values))!);

        Assert.True(reply.AcksApplied, $"The acknowledgements were refused: {reply.AckError}.");
        Assert.Equal(new[] { 2L, 3L, 4L }, reply.InvalidAcks.Select(p => (long)p).ToArray());
        var pending = await db.StreamPendingMessagesAsync(keys.Stream, RedisStreamKeys.Group, 10, RedisValue.Null);
        Assert.Equal(new[] { ids[1], ids[2], ids[3] }, pending.Select(p => (string?)p.MessageId).ToArray());
        Assert.Equal(2, await db.SortedSetLengthAsync(keys.Succeeded));
    }

    [Fact]
    public async Task Acknowledge_ThousandsOfPlainElements_AllApplied()
    {
        // More than a round ever sends at once (BatchSize).
        const int Count = 2_000;
        var (db, keys) = await NewQueueAsync();
        string[] ids = await DeliverAsync(db, keys, Count);
        var args = new RoundArguments(0, false, releases: 0, plainAcks: Count, acks: 0, recordsKept: true);
        args.SetSettings(RedisStreamKeys.Group, Consumer, 1_000, keys.NudgeName, 0, 256, 0, 600_000, 100_000, trim: false);
        foreach (string id in ids)
        {
            args.AddPlainAck(id, 1_700_000_000_000, 1_700_000_000_100);
        }

        var reply = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, RoundKeys(keys), args.Values))!);

        Assert.True(reply.AcksApplied, $"The acknowledgements were refused: {reply.AckError}.");
        Assert.Empty(reply.InvalidAcks);
        Assert.Equal(0, (await db.StreamPendingAsync(keys.Stream, RedisStreamKeys.Group)).PendingMessageCount);
        Assert.Equal(Count, await db.SortedSetLengthAsync(keys.Succeeded));
    }

    [Fact]
    public async Task Acknowledge_PlainElementsWithoutRecords_TheirIdsAlone_AllAppliedAndTrimmed()
    {
        // Without records, a plain acknowledgement is its stream id alone and a round of them is one XACK
        // (acknowledge.lua): all acknowledged, nothing recorded, the stream trimmed, the key released.
        var (db, keys) = await NewQueueAsync();
        string[] ids = await DeliverAsync(db, keys, 3);
        await db.StringSetAsync(keys.IdempotencyKey("k"), $"{ids[1]}|{ids[1]}");
        var args = new RoundArguments(0, false, releases: 1, plainAcks: 3, acks: 0, recordsKept: false);
        args.SetSettings(RedisStreamKeys.Group, Consumer, 1_000, keys.NudgeName, 0, 256, 0, 0, 10_000, trim: false);
        args.AddRelease("k", ids[1], ids[1]);
        foreach (string id in ids)
        {
            args.AddPlainAck(id, 1_700_000_000_000, 1_700_000_000_100);
        }

        Assert.Equal(ids, args.Values[^3..].Select(v => (string?)v).ToArray());
        var reply = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, RoundKeys(keys), args.Values))!);

        Assert.True(reply.AcksApplied, $"The acknowledgements were refused: {reply.AckError}.");
        Assert.Empty(reply.InvalidAcks);
        Assert.Equal(0, (await db.StreamPendingAsync(keys.Stream, RedisStreamKeys.Group)).PendingMessageCount);
        Assert.Equal(0, await db.StreamLengthAsync(keys.Stream));
        Assert.Equal(0, await db.SortedSetLengthAsync(keys.Succeeded));
        Assert.False(await db.KeyExistsAsync(keys.IdempotencyKey("k")));
    }

    [Fact]
    public async Task Acknowledge_PlainElementsWithoutRecords_OneUnreadableId_LeftOutAndNamed_TheOthersApplied()
    {
        // XACK reads every id before it acknowledges any: one it cannot read refuses the whole section, and the
        // elements are then read one by one, so the others are still acknowledged.
        var (db, keys) = await NewQueueAsync();
        string[] ids = await DeliverAsync(db, keys, 3);
        var args = new RoundArguments(0, false, releases: 0, plainAcks: 4, acks: 0, recordsKept: false);
        args.SetSettings(RedisStreamKeys.Group, Consumer, 1_000, keys.NudgeName, 0, 256, 0, 0, 10_000, trim: false);
        args.AddPlainAck(ids[0], 1_700_000_000_000, 1_700_000_000_100);
        args.AddPlainAck("not-an-id", 1_700_000_000_000, 1_700_000_000_100);
        args.AddPlainAck(ids[1], 1_700_000_000_000, 1_700_000_000_100);
        args.AddPlainAck("1-2,3-4", 1_700_000_000_000, 1_700_000_000_100);

        var reply = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, RoundKeys(keys), args.Values))!);

        Assert.True(reply.AcksApplied, $"The acknowledgements were refused: {reply.AckError}.");
        Assert.Equal(new[] { 2L, 4L }, reply.InvalidAcks.Select(p => (long)p).ToArray());
        var pending = await db.StreamPendingMessagesAsync(keys.Stream, RedisStreamKeys.Group, 10, RedisValue.Null);
        Assert.Equal(ids[2], (string?)pending.Single().MessageId);
    }

    [Fact]
    public async Task Acknowledge_PlainElementsWithoutRecords_StreamOfAnotherType_RefusalReturned_NothingApplied()
    {
        // A refusal that is not about an id (the stream's key holds a string) is met again by the element-by-element
        // pass and returned as the part's error, with nothing applied.
        var (db, keys) = await NewQueueAsync();
        string[] ids = await DeliverAsync(db, keys, 2);
        await db.KeyDeleteAsync(keys.Stream);
        await db.StringSetAsync(keys.Stream, "not a stream");
        var args = new RoundArguments(0, false, releases: 0, plainAcks: 2, acks: 0, recordsKept: false);
        args.SetSettings(RedisStreamKeys.Group, Consumer, 1_000, keys.NudgeName, 0, 256, 0, 0, 10_000, trim: false);
        args.AddPlainAck(ids[0], 1_700_000_000_000, 1_700_000_000_100);
        args.AddPlainAck(ids[1], 1_700_000_000_000, 1_700_000_000_100);

        var reply = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, RoundKeys(keys), args.Values))!);

        Assert.False(reply.AcksApplied);
        Assert.StartsWith("WRONGTYPE", reply.AckError, StringComparison.Ordinal);
        Assert.Empty(reply.InvalidAcks);
    }

    [Fact]
    public async Task Promote_DueMemberThatCannotBeRead_IsDeadLetteredAsUnreadable_AndTheOthersArePromoted()
    {
        var (db, keys) = await NewQueueAsync();
        await db.SortedSetAddAsync(keys.Delayed, [new("garbage", 0), new("s1-1|1|1700000000000|{\"n\":1}", 1), new("s1-2|x|y|{}", 2)]);
        await db.HashSetAsync(keys.Scheduled, "s1-1", "s1-1|1|1700000000000|{\"n\":1}");

        var reply = await RoundAsync(db, keys, fetch: 10);

        Assert.True(reply.FetchError is null, $"The fetch failed: {reply.FetchError}.");
        Assert.Equal(0, await db.SortedSetLengthAsync(keys.Delayed));
        Assert.Equal("{\"n\":1}", (string?)(await db.StreamRangeAsync(keys.Stream)).Single()["p"]);
        var dead = await db.StreamRangeAsync(keys.Dead);
        Assert.Equal(new[] { "garbage", "s1-2|x|y|{}" }, dead.Select(e => (string?)e["p"]).Order(StringComparer.Ordinal).ToArray());
        Assert.All(dead, e => Assert.Equal("unreadable", (string?)e["r"]));
    }

    private static RedisKey[] RoundKeys(RedisStreamKeys keys) => [keys.Stream, keys.Delayed, keys.Scheduled, keys.Recurring, keys.Ids, keys.Epoch];

    private static string[] Answers(RoundReply reply) => reply.EnqueueAnswers.Select(a => (string)a!).ToArray();

    private async Task<(IDatabase Db, RedisStreamKeys Keys)> NewQueueAsync()
    {
        var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "round");
        await db.StreamCreateConsumerGroupAsync(keys.Stream, RedisStreamKeys.Group, StreamPosition.Beginning, createStream: true);
        return (db, keys);
    }

    /// <summary>Adds <paramref name="count"/> entries and delivers them to the consumer: ids to acknowledge.</summary>
    private static async Task<string[]> DeliverAsync(IDatabase db, RedisStreamKeys keys, int count)
    {
        for (int i = 0; i < count; i++)
        {
            await db.StreamAddAsync(keys.Stream, [new("p", "done"), new("t", "0")]);
        }

        var read = await db.StreamReadGroupAsync(keys.Stream, RedisStreamKeys.Group, Consumer, StreamPosition.NewMessages, count);
        return [.. read.Select(e => (string)e.Id!)];
    }

    /// <summary>One round with enqueues (payload <c>p{i}</c>, full form), plain-free acknowledgements of <paramref name="acks"/> and a fetch.</summary>
    private static async Task<RoundReply> RoundAsync(IDatabase db, RedisStreamKeys keys, (string Spec, string Key)[]? enqueues = null, string[]? acks = null, int fetch = 0, RedisKey[]? roundKeys = null)
    {
        enqueues ??= [];
        acks ??= [];
        var args = new RoundArguments(enqueues.Length, false, releases: 0, plainAcks: 0, acks: acks.Length, recordsKept: true);
        args.SetSettings(RedisStreamKeys.Group, Consumer, 1_000, keys.NudgeName, fetch, 256, 0, 600_000, 10_000, trim: false);
        args.NudgeTag = "c|1";
        for (int i = 0; i < enqueues.Length; i++)
        {
            args.AddEnqueue($"p{i}", enqueues[i].Spec, enqueues[i].Key);
        }

        foreach (string id in acks)
        {
            args.AddAck(id, id, 1, 1_700_000_000_000, 1_700_000_000_100, cancelRequested: false);
        }

        return new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, roundKeys ?? RoundKeys(keys), args.Values))!);
    }

    /// <summary>Each payload answered with an id is in Redis (the stream or the delayed set), each answered otherwise is not.</summary>
    private static async Task AssertStoredAsExactlyAnsweredAsync(IDatabase db, RedisStreamKeys keys, string[] payloads, string[] answers)
    {
        var stored = (await db.StreamRangeAsync(keys.Stream)).Select(e => (string)e["p"]!).ToList();
        stored.AddRange((await db.SortedSetRangeByRankAsync(keys.Delayed)).Select(m => ((string)m!)[(((string)m!).LastIndexOf('|') + 1)..]));
        for (int i = 0; i < payloads.Length; i++)
        {
            bool told = !answers[i].StartsWith('?') && answers[i] != "#";
            Assert.True(told == stored.Contains(payloads[i]), $"{payloads[i]}: answered '{answers[i]}', Redis {(stored.Contains(payloads[i]) ? "has it" : "has not")}.");
        }
    }
}
