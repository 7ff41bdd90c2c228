using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Testing;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>
/// <c>findJobs.lua</c> called directly with crafted keys: what one call reads and returns (no payloads; bounded
/// entries and bytes per call), against a real redis-server.
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

        var reply = await FindAsync(db, keys, "LZ", "QS", limit: 10);

        var jobs = (RedisResult[])reply[0]!;
        Assert.Equal(["Q", "S"], jobs.Select(j => (string)((RedisResult[])j!)[1]!));
        Assert.Equal((string)queued!, (string)((RedisResult[])jobs[0]!)[0]!);
        Assert.DoesNotContain(Strings(reply), s => s.Contains("PPPP", StringComparison.Ordinal));
        var fields = (RedisResult[])((RedisResult[])jobs[0]!)[4]!;
        Assert.Equal(["t", "1700000000000"], fields.Select(f => (string)f!));
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
        Assert.Equal(4, (int)(long)stream[4]);
        Assert.Equal(4, ((RedisResult[])stream[0]!).Length);
        Assert.Equal(("L", ids[^4]), ((string)stream[1]!, (string)stream[2]!));

        var delayed = await FindAsync(db, keys, "Z", "R", limit: 10);
        Assert.Equal(4, (int)(long)delayed[4]);
        Assert.Equal(("Z", "4102444800003", "s3-0"), ((string)delayed[1]!, (string)delayed[2]!, (string)delayed[3]!));
        Assert.DoesNotContain(Strings(stream).Concat(Strings(delayed)), s => s.Contains("xxxx", StringComparison.Ordinal));
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
            Assert.Empty((RedisResult[])reply[0]!);
            int read = (int)(long)reply[4];
            Assert.InRange(read, 1, Budget);
            scanned += read;
            calls++;
            position = (string)reply[2]!;
            member = (string)reply[3]!;
            if ((string)reply[1]! == string.Empty)
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
        var order = ((RedisResult[])all[0]!).Select(j => (string)((RedisResult[])j!)[0]!).ToArray();
        Assert.Equal(["s0-0", "s1-0", "s1-1", "s10-0", "s2-0", "s3-0", "s9-0"], order);

        // The member the cursor names is gone (it came due, or was cancelled): the page goes on from where it stood.
        await db.SortedSetRemoveAsync(keys.Delayed, "s10-0|1|0|{}");
        var next = await FindAsync(db, keys, "Z", "R", limit: 2, cursorPhase: "Z", position: "5000", member: "s10-0");
        Assert.Equal(["s2-0", "s3-0"], ((RedisResult[])next[0]!).Select(j => (string)((RedisResult[])j!)[0]!));
        var last = await FindAsync(db, keys, "Z", "R", limit: 2, cursorPhase: "Z", position: "5000", member: "s3-0");
        Assert.Equal(["s9-0"], ((RedisResult[])last[0]!).Select(j => (string)((RedisResult[])j!)[0]!));
        Assert.Equal(string.Empty, (string)last[1]!);
    }

    private static (string Stream, string Delayed, string Scheduled) NewKeys()
    {
        string prefix = DurableTestHost.NewPrefix();
        return ($"{prefix}:{{q}}:stream", $"{prefix}:{{q}}:delayed", $"{prefix}:{{q}}:scheduled");
    }

    /// <summary>Calls findJobs.lua: ARGV group, phases, live kinds, cursor (phase, position, member), limit, scan limit, error text, byte budget.</summary>
    private static async Task<RedisResult[]> FindAsync(
        IDatabase db,
        (string Stream, string Delayed, string Scheduled) keys,
        string phases,
        string live,
        int limit,
        int scanLimit = 10_000,
        string error = "",
        string cursorPhase = "",
        string position = "",
        string member = "") =>
        (RedisResult[])(await db.ScriptEvaluateAsync(
            DurableScripts.FindJobs,
            [keys.Stream, keys.Delayed, keys.Scheduled],
            [RedisStreamKeys.Group, phases, live, cursorPhase, position, member, limit, scanLimit, error, OneMiB]))!;

    private static IEnumerable<string> Strings(RedisResult result) =>
        result.Resp2Type == ResultType.Array
            ? ((RedisResult[])result!).SelectMany(Strings)
            : result.IsNull ? [] : [(string)result!];

    private static IEnumerable<string> Strings(RedisResult[] results) => results.SelectMany(Strings);
}
