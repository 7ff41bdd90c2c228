using StackExchange.Redis;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Testing;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Completed entries are trimmed from the stream up to the oldest entry still needed (the oldest pending one, or the
/// first not yet delivered) instead of being deleted one by one: what stays behind a pending entry, what the queue's
/// depth and capacity count meanwhile, and that a pending entry is never trimmed away from its reclaim.
/// </summary>
public sealed class DurableTrimTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task HeldEntryReclaimedCompletedAndTrimmedElsewhere_IsTakenForReclaimed_NotForLostByRedis()
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (_, _, _) => new ValueTask(release.Task) };
        var logs = new LogCapture();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await using var host = await DurableTestHost.StartAsync(
            redis.Server,
            log,
            prefix,
            configureDurable: d =>
            {
                d.ClaimTimeout = TimeSpan.FromMinutes(1);
                d.HeartbeatInterval = TimeSpan.FromMilliseconds(300);
            },
            logs: logs);
        await host.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 0 to start");
        var entry = Assert.Single(await db.StreamRangeAsync(stream));

        // This host stalled: another consumer reclaimed job 0, completed it, and its round trimmed the stream past it
        // (a trim leaves max-deleted-entry-id where it was, below job 0's id).
        Assert.Single(await db.StreamClaimIdsOnlyAsync(stream, "workers", "elsewhere", 0, [entry.Id]));
        Assert.Equal(1, await db.StreamAcknowledgeAsync(stream, "workers", entry.Id));
        long ms = long.Parse(((string)entry.Id!).Split('-')[0], System.Globalization.CultureInfo.InvariantCulture);
        Assert.Equal(1, (long)await db.ExecuteAsync("XTRIM", stream, "MINID", $"{ms + 1}-0"));

        // Its next heartbeat: settled elsewhere (504), not lost by Redis (511, which would store it again).
        await Eventually.HoldsAsync(() => Task.FromResult(logs.Entries.Any(e => e.EventId.Id is 504 or 511)), "the heartbeat to look at job 0");
        Assert.Contains(logs.Entries, e => e.EventId.Id == 504);
        Assert.DoesNotContain(logs.Entries, e => e.EventId.Id == 511);
        release.SetResult();
    }
}
