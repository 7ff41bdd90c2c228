using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>
/// <c>findJobs.lua</c> called directly through <see cref="FindJobsCall"/> with crafted keys: what one call reads and
/// returns (no payloads; bounded entries and bytes per call), against a real redis-server.
/// </summary>
public sealed class FindJobsScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const int Budget = 256;
    private const int OneMiB = 1 << 20;

    [Fact]
    public async Task FindJobs_QueuedAndScheduledJobsWithPayloads_ReplyHoldsNoPayloadBytes()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = NewKeys();
        await db.ExecuteAsync("XGROUP", "CREATE", keys.Stream, RedisStreamKeys.Group, "0", "MKSTREAM");
        string payload = "{\"secret\":\"" + new string('P', 10_000) + "\"}";
        var queued = await db.StreamAddAsync(keys.Stream, [new("p", payload), new("t", "1700000000000")]);
        await db.SortedSetAddAsync(keys.Delayed, "s1-0|1|1700000000000|" + payload, 4102444800000);
        await db.HashSetAsync(keys.Scheduled, "s1-0", "s1-0|1|1700000000000|" + payload);

        // The reply as Redis sent it: not one payload byte in any of its strings.
        var raw = await db.ScriptEvaluateAsync(DurableScripts.FindJobs, FindJobsCall.Keys(keys), FindJobsCall.Arguments("LZ", "QS", string.Empty, string.Empty, string.Empty, 10, 10_000, string.Empty, OneMiB));
        Assert.DoesNotContain(Strings(raw), s => s.Contains("PPPP", StringComparison.Ordinal));

        var reply = FindJobsReply.Read(raw);
        Assert.Equal([StatusKind.Queued, StatusKind.Scheduled], reply.Jobs.Select(j => j.Kind));
        Assert.Equal(((string)queued!, (string)queued!), (reply.Jobs[0].JobId, reply.Jobs[0].Entry?.StreamId));
        Assert.Equal((string.Empty, DateTimeOffset.FromUnixTimeMilliseconds(1700000000000)), (reply.Jobs[0].Entry?.Payload, DateTimeOffset.FromUnixTimeMilliseconds(reply.Jobs[0].Entry!.EnqueuedAtMs)));
        Assert.Equal(("s1-0", DateTimeOffset.FromUnixTimeMilliseconds(4102444800000)), (reply.Jobs[1].JobId, reply.Jobs[1].Due));
        Assert.Equal((string.Empty, 2), (reply.NextPhase, reply.Scanned));
    }

    [Fact]
    public async Task FindJobs_EntriesLargerThanTheByteBudget_OneCallStopsOnceItReadTheBudget()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = NewKeys();
        await db.ExecuteAsync("XGROUP", "CREATE", keys.Stream, RedisStreamKeys.Group, "0", "MKSTREAM");
        string payload = new('x', 300_000);
        var ids = new List<string>();
        for (int n = 0; n < 10; n++)
        {
            ids.Add((string)(await db.StreamAddAsync(keys.Stream, [new("p", payload), new("t", "1700000000000")]))!);
            await db.SortedSetAddAsync(keys.Delayed, $"s{n}-0|1|1700000000000|{payload}", 4102444800000 + n);
        }

        // 300 KB entries and a budget of 1 MiB: the fourth entry passes it, and the call stops there with a cursor.
        var stream = await FindAsync(db, keys, "L", "Q", limit: 10);
        Assert.Equal(4, stream.Scanned);
        Assert.Equal(4, stream.Jobs.Length);
        Assert.Equal(4 * (300_000 + "1700000000000".Length), stream.Bytes);
        Assert.Equal(("L", ids[^4], string.Empty), (stream.NextPhase, stream.NextPosition, stream.NextMember));
        Assert.All(stream.Jobs, j => Assert.Equal(string.Empty, j.Entry?.Payload));

        var delayed = await FindAsync(db, keys, "Z", "R", limit: 10);
        Assert.Equal(4, delayed.Scanned);
        Assert.Equal(("Z", "4102444800003", "s3-0"), (delayed.NextPhase, delayed.NextPosition, delayed.NextMember));
    }

    [Fact]
    public async Task FindJobs_ManySameScoreMembersAndAFilterMatchingNone_EachCallScansAtMostTheBudgetAndSeeksOn()
    {
        const int Members = 20_000;
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = NewKeys();
        for (int from = 0; from < Members; from += 1000)
        {
            var batch = Enumerable.Range(from, 1000).Select(n => $"s{n}-0").ToArray();
            await db.SortedSetAddAsync(keys.Delayed, [.. batch.Select(j => new SortedSetEntry($"{j}|1|1700000000000|{{}}", 4102444800000))]);
            await db.HashSetAsync(keys.Scheduled, [.. batch.Select(j => new HashEntry(j, $"{j}|1|1700000000000|{{}}"))]);
        }

        // A caller asking for a scan of 100,000 still gets calls of at most the budget; each resumes after the last
        // member the previous one read (a seek: the members read add up to the set, none twice).
        int calls = 0, scanned = 0;
        string position = string.Empty, member = string.Empty;
        var lastSeen = new HashSet<string>();
        do
        {
            var reply = await FindAsync(db, keys, "Z", "S", limit: 50, scanLimit: 100_000, error: "timeout", position: position, member: member, cursorPhase: calls == 0 ? string.Empty : "Z");
            Assert.Empty(reply.Jobs);
            Assert.InRange(reply.Scanned, 1, Budget);
            scanned += reply.Scanned;
            calls++;
            position = reply.NextPosition;
            member = reply.NextMember;
            if (reply.NextPhase.Length == 0)
            {
                break;
            }

            Assert.Equal("4102444800000", position);
            Assert.True(lastSeen.Add(member), $"the cursor went back to {member}");
        }
        while (calls < 1000);

        Assert.Equal(Members, scanned);
        Assert.Equal((Members + Budget - 1) / Budget, calls);
    }

    [Fact]
    public async Task FindJobs_CursorMemberGone_SeeksToTheNextMemberWithThatScoreOrAfter()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = NewKeys();
        string[] jobs = ["s1-0", "s1-1", "s10-0", "s2-0", "s3-0"];
        foreach (string job in jobs)
        {
            await db.SortedSetAddAsync(keys.Delayed, $"{job}|1|0|{{}}", 5000);
        }

        await db.SortedSetAddAsync(keys.Delayed, "s9-0|1|0|{}", 6000);
        await db.SortedSetAddAsync(keys.Delayed, "s0-0|1|0|{}", 4000);
        var all = await FindAsync(db, keys, "Z", "R", limit: 50);
        Assert.Equal(["s0-0", "s1-0", "s1-1", "s10-0", "s2-0", "s3-0", "s9-0"], all.Jobs.Select(j => j.JobId));

        // The member the cursor names is gone (it came due, or was cancelled): the page goes on from where it stood.
        await db.SortedSetRemoveAsync(keys.Delayed, "s10-0|1|0|{}");
        var next = await FindAsync(db, keys, "Z", "R", limit: 2, cursorPhase: "Z", position: "5000", member: "s10-0");
        Assert.Equal(["s2-0", "s3-0"], next.Jobs.Select(j => j.JobId));
        var last = await FindAsync(db, keys, "Z", "R", limit: 2, cursorPhase: "Z", position: "5000", member: "s3-0");
        Assert.Equal(["s9-0"], last.Jobs.Select(j => j.JobId));
        Assert.Equal(string.Empty, last.NextPhase);
    }

    [Fact]
    public async Task FindJobs_EndedListsWithAFilter_ReadsTheRecordsAndMatchesTheLastError()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = NewKeys();
        await db.SortedSetAddAsync(keys.DeadLettered, [new("1-1", 1000), new("1-2", 2000), new("1-3", 3000)]);
        await db.HashSetAsync(keys.EndedRecords, [
            new("1-1", "D\u001f\u001f1000\u001f3\u001f900\u001fc1\u001f950\u001fDisk Full"),
            new("1-2", "D\u001f\u001f2000\u001f1\u001f900\u001fc1\u001f950\u001ftimeout"),
            new("1-3", "D\u001f\u001f3000\u001f2\u001f900\u001fc1\u001f950\u001f\u001e1\u001fc2\u001f910\u001f920\u001fR\u001fdisk full again")]);

        var reply = await FindAsync(db, keys, "D", string.Empty, limit: 10, error: "disk full");

        // Newest first; 1-3's last error is its failed attempt's (the header's is empty); 1-2 does not match.
        Assert.Equal(["1-3", "1-1"], reply.Jobs.Select(j => j.JobId));
        Assert.All(reply.Jobs, j => Assert.Equal((StatusKind.Ended, 'D'), (j.Kind, j.Record.State)));
        Assert.Equal(3, reply.Jobs[1].Record.Attempt);
        Assert.Equal((string.Empty, 3), (reply.NextPhase, reply.Scanned));
    }

    private static RedisStreamKeys NewKeys() => new(DurableTestHost.NewPrefix(), "q");

    private static Task<FindJobsReply> FindAsync(
        IDatabase db,
        RedisStreamKeys keys,
        string phases,
        string live,
        int limit,
        int scanLimit = 10_000,
        string error = "",
        string cursorPhase = "",
        string position = "",
        string member = "") =>
        FindJobsCall.RunAsync(db, keys, phases, live, cursorPhase, position, member, limit, scanLimit, error, OneMiB);

    private static IEnumerable<string> Strings(RedisResult result) =>
        result.Resp2Type == ResultType.Array
            ? ((RedisResult[])result!).SelectMany(Strings)
            : result.IsNull ? [] : [(string)result!];
}
