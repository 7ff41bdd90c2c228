using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// A durable queue's backlog waits in Redis, behind a short prefetch: the autoscaler must see that wait, or a queue of
/// short jobs never grows past its minimum however long its stream (found with the sample under load: the legacy queue
/// stayed at 48 of 256 threads for minutes while 25,000 callbacks waited).
/// </summary>
public sealed class DurableAutoScaleTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task BacklogWaitingInRedis_CountsAsQueueWait_AndTheQueueScalesUp()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog { Behavior = static (_, _, _) => { Thread.Sleep(10); return ValueTask.CompletedTask; } };
        await using (var front = await DurableTestHost.StartAsync(redis.Server, log, prefix, "front", configureDurable: d => d.Consume = false))
        {
            await Task.WhenAll(Enumerable.Range(0, 60).Select(async n => await front.Producer.EnqueueAsync(new TestJob(n))));
        }

        // The jobs must be older than the target wait when they are fetched: that age is the precondition, not a signal.
        await Task.Delay(TimeSpan.FromMilliseconds(400));

        // One thread, 10 ms jobs and a prefetch of 2: a job waits at most ~20 ms in the prefetch, far under the 100 ms
        // target, so only the time in Redis can make the queue grow.
        using var logs = new LogCapture();
        await using var worker = await DurableTestHost.StartAsync(
            redis.Server,
            log,
            prefix,
            "worker",
            configure: o =>
            {
                o.MinWorkers = 1;
                o.MaxWorkers = 4;
                o.AutoScale.TargetQueueWait = TimeSpan.FromMilliseconds(100);
                o.AutoScale.ScaleUpCooldown = TimeSpan.Zero;
            },
            configureDurable: d => d.Prefetch = 2,
            logs: logs);

        await log.WaitUntilAsync(() => log.Completed == 60, "the 60 jobs to run");
        Assert.Contains(logs.Entries, e => e.EventId.Name == "ScaledUp");
    }

    [Theory]
    [InlineData("1700000000000-0", 1_700_000_000_250, 250)]
    [InlineData("1700000000000-17", 1_700_000_000_000, 0)]
    [InlineData("1700000000500-0", 1_700_000_000_000, 0)]     // Redis's clock ahead of this host's: no wait, never negative
    [InlineData("1700000000000", 1_700_000_001_000, 1000)]
    [InlineData("not-an-id", 1_700_000_001_000, 0)]
    public void WaitedInStream_IsTheTimeSinceTheIdsMilliseconds(string id, long nowMs, int expectedMs) =>
        Assert.Equal(TimeSpan.FromMilliseconds(expectedMs), RedisStreamStore.WaitedInStream(id, nowMs));
}
