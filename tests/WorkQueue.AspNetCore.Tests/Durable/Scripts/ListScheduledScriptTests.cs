using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>listScheduled.lua called directly through <see cref="ListScheduledCall"/> with crafted keys and arguments, on a real redis-server.</summary>
public sealed class ListScheduledScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task ListScheduled_ScheduledJobsAndRetries_ListsOnlyTheScheduledOnesSoonestFirst()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await ScheduleAsync(db, keys, "s3-1", 3000, "{\"n\":3}");
        await ScheduleAsync(db, keys, "s1-1", 1000, "{\"n\":1}");
        await ScheduleAsync(db, keys, "s2-1", 2000, "{\"n\":2}", key: "k");

        // Retries wait in the same set, some before the scheduled jobs: not listed.
        await db.SortedSetAddAsync(keys.Delayed, "1-1|2|900|{\"r\":1}", 500);
        await db.SortedSetAddAsync(keys.Delayed, "1-2|2|900|{\"r\":2}", 2500);
        string before = await ScriptState.SnapshotAsync(db, keys);

        var jobs = await ListScheduledCall.RunAsync(db, keys, count: 10, scanLimit: 10_000);

        Assert.Equal(
            [
                new ListedScheduledJob("s1-1", 1000, 900, "{\"n\":1}"),
                new ListedScheduledJob("s2-1", 2000, 900, "{\"n\":2}"),
                new ListedScheduledJob("s3-1", 3000, 900, "{\"n\":3}"),
            ],
            jobs);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task ListScheduled_MoreThanCount_ListsTheCountSoonest()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        for (int n = 1; n <= 5; n++)
        {
            await ScheduleAsync(db, keys, $"s{n}-1", 1000 * n, "{}");
        }

        Assert.Equal(["s1-1", "s2-1"], (await ListScheduledCall.RunAsync(db, keys, count: 2, scanLimit: 10_000)).Select(j => j.JobId));
        Assert.Empty(await ListScheduledCall.RunAsync(db, keys, count: 0, scanLimit: 10_000));
    }

    [Fact]
    public async Task ListScheduled_ScheduledJobsBehindTheScanLimit_NotListed()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);

        // 300 retries due first, then one scheduled job: the set is read in pages of 256, up to the scan limit.
        await db.SortedSetAddAsync(keys.Delayed, [.. Enumerable.Range(0, 300).Select(n => new SortedSetEntry($"1-{n}|2|900|{{}}", 100 + n))]);
        await ScheduleAsync(db, keys, "s9-1", 9000, "{}");

        Assert.Empty(await ListScheduledCall.RunAsync(db, keys, count: 10, scanLimit: 256));
        Assert.Equal(["s9-1"], (await ListScheduledCall.RunAsync(db, keys, count: 10, scanLimit: 512)).Select(j => j.JobId));
    }

    [Fact]
    public async Task ListScheduled_HostileMembers_ListsThePayloadsAsStoredAndSkipsUnreadableMembers()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string huge = "{\"big\":\"" + new string('x', 1 << 20) + "\"}";
        await ScheduleAsync(db, keys, "s1-1", 1000, "{\"a\":\"|\\u0001|{q}\"}", key: "k|\u001f{q}");
        await ScheduleAsync(db, keys, "s2-1", 2000, string.Empty);
        await ScheduleAsync(db, keys, "s3-1", 3000, huge);

        // Members a hand (or an older version) left that the script cannot read: no fields, or too few; each named by
        // the scheduled hash, so only their form keeps them out.
        await db.SortedSetAddAsync(keys.Delayed, "s4-1", 4000);
        await db.HashSetAsync(keys.Scheduled, "s4-1", "s4-1");
        await db.SortedSetAddAsync(keys.Delayed, "s5-1|1", 5000);
        await db.HashSetAsync(keys.Scheduled, "s5-1", "s5-1|1");

        var jobs = await ListScheduledCall.RunAsync(db, keys, count: 10, scanLimit: 10_000);

        Assert.Equal(["s1-1", "s2-1", "s3-1"], jobs.Select(j => j.JobId));
        Assert.Equal("{\"a\":\"|\\u0001|{q}\"}", jobs[0].Payload);
        Assert.Equal(string.Empty, jobs[1].Payload);
        Assert.Equal(huge, jobs[2].Payload);
    }

    [Fact]
    public async Task ListScheduled_DelayedKeyOfAnotherType_FailsWithRedisErrorWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await db.StringSetAsync(keys.Delayed, "not a sorted set");
        string before = await ScriptState.SnapshotAsync(db, keys);

        var error = await Assert.ThrowsAsync<RedisServerException>(() => ListScheduledCall.RunAsync(db, keys, count: 10, scanLimit: 10_000));

        Assert.Contains("WRONGTYPE", error.Message, StringComparison.Ordinal);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task ListScheduled_ScheduledKeyOfAnotherType_FailsWithRedisErrorWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await db.SortedSetAddAsync(keys.Delayed, "s1-1|1|900|{}", 1000);
        await db.StringSetAsync(keys.Scheduled, "not a hash");
        string before = await ScriptState.SnapshotAsync(db, keys);

        var error = await Assert.ThrowsAsync<RedisServerException>(() => ListScheduledCall.RunAsync(db, keys, count: 10, scanLimit: 10_000));

        Assert.Contains("WRONGTYPE", error.Message, StringComparison.Ordinal);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    /// <summary>A scheduled job as the round writes it: its member of the delayed set (the key framed by \u0001 before the payload), and the scheduled hash naming it.</summary>
    private static async Task ScheduleAsync(IDatabase db, RedisStreamKeys keys, string job, long dueMs, string payload, string? key = null)
    {
        string member = key is null ? $"{job}|1|900|{payload}" : $"{job}|1|900|\u0001{key}\u0001{payload}";
        await db.SortedSetAddAsync(keys.Delayed, member, dueMs);
        await db.HashSetAsync(keys.Scheduled, job, member);
    }
}
