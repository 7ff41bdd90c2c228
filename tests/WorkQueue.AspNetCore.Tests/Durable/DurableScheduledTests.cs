using System.Diagnostics;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>Scheduled jobs on a durable queue, on a real redis-server: due times on Redis's clock, ordering, cancel, restarts, capacity.</summary>
public sealed class DurableScheduledTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task ScheduleAsync_Delay_RunsOnceDueAndNotBefore()
    {
        var log = new JobLog();
        var ran = new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously);
        log.Behavior = (_, _, _) => { ran.TrySetResult(Stopwatch.GetTimestamp()); return ValueTask.CompletedTask; };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix());

        long before = Stopwatch.GetTimestamp();
        string id = await host.Producer.ScheduleAsync(new TestJob(1), TimeSpan.FromMilliseconds(1_500));
        long started = await Wait.ForAsync(ran.Task, "the scheduled job");

        // Redis counts the delay on its own clock, from when it stored the job (after 'before'), in whole ms.
        Assert.True(Stopwatch.GetElapsedTime(before, started) >= TimeSpan.FromMilliseconds(1_499), $"ran {Stopwatch.GetElapsedTime(before, started).TotalMilliseconds:F0} ms after scheduling");
        Assert.StartsWith("s", id, StringComparison.Ordinal);
        await log.WaitUntilAsync(() => log.Completed == 1, "the job to complete");
        Assert.Equal(1, log.CallsOf(1));
    }

    [Fact]
    public async Task ScheduleAsync_DueTimesOutOfOrder_RunInDueOrder()
    {
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o => { o.MinWorkers = 1; o.MaxWorkers = 1; });
        int[] order = [5, 1, 3, 2, 4];
        foreach (int n in order)
        {
            await host.Producer.ScheduleAsync(new TestJob(n), TimeSpan.FromMilliseconds(300 * n));
        }

        await log.WaitUntilAsync(() => log.Completed == order.Length, "every job");
        Assert.Equal([1, 2, 3, 4, 5], log.Runs.Select(r => r.Job.N));
    }

    [Fact]
    public async Task ScheduleAsync_TimeInThePast_RunsNowAsAnOrdinaryEntry()
    {
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix());

        string past = await host.Producer.ScheduleAsync(new TestJob(1), DateTimeOffset.UtcNow.AddHours(-1));
        string zero = await host.Producer.ScheduleAsync(new TestJob(2), TimeSpan.Zero);

        await log.WaitUntilAsync(() => log.Completed == 2, "both jobs");
        Assert.DoesNotContain('s', past[..1]);
        Assert.DoesNotContain('s', zero[..1]);
    }

    [Fact]
    public async Task CancelScheduledAsync_BeforeItsTime_RemovesItFromRedis()
    {
        var log = new JobLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix);
        var store = FindStore(host);

        string cancelled = await host.Producer.ScheduleAsync(new TestJob(1), TimeSpan.FromSeconds(1));
        string kept = await host.Producer.ScheduleAsync(new TestJob(2), TimeSpan.FromSeconds(1));
        string later = await host.Producer.ScheduleAsync(new TestJob(3), TimeSpan.FromHours(1));
        var listed = await store.Jobs.ListScheduledAsync(10);
        Assert.Equal([cancelled, kept, later], listed.Select(j => j.Id));
        Assert.True(listed[0].DueAt < listed[2].DueAt);

        Assert.True(await host.Producer.CancelScheduledAsync(cancelled));
        Assert.False(await host.Producer.CancelScheduledAsync(cancelled));
        Assert.False(await host.Producer.CancelScheduledAsync("s0-0"));

        await log.WaitUntilAsync(() => log.Completed == 1, "the job that was kept");
        Assert.Equal((0, 1), (log.CallsOf(1), log.CallsOf(2)));
        Assert.False(await host.Producer.CancelScheduledAsync(kept));
        Assert.Equal([later], (await store.Jobs.ListScheduledAsync(10)).Select(j => j.Id));
        Assert.True(await host.Producer.CancelScheduledAsync(later));

        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        Assert.Equal(0, await db.SortedSetLengthAsync(DurableTestHost.DelayedKey(prefix)));
        Assert.Equal(0, await db.HashLengthAsync(store.Keys.Scheduled));
    }

    [Fact]
    public async Task ScheduledJob_EveryInstanceStopped_RunsOnTheNextInstanceAfterItsTime()
    {
        var log = new JobLog();
        string prefix = DurableTestHost.NewPrefix();
        var first = await DurableTestHost.StartAsync(redis.Server, log, prefix, instance: "a");
        await first.Producer.ScheduleAsync(new TestJob(1), TimeSpan.FromSeconds(2));
        await first.DisposeAsync();
        Assert.Equal(0, log.CallsOf(1));

        await using var second = await DurableTestHost.StartAsync(redis.Server, log, prefix, instance: "b");
        await log.WaitUntilAsync(() => log.Completed == 1, "the job after the restart");
        Assert.Equal(("b", 1), (log.Runs.Single().Instance, log.CallsOf(1)));
    }

    [Fact]
    public async Task ScheduledJobs_CountTowardCapacity_AsEveryJobStoredInRedisDoes()
    {
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o => { o.Capacity = 2; o.FullMode = QueueFullMode.Reject; });

        await host.Producer.ScheduleAsync(new TestJob(1), TimeSpan.FromHours(1));
        await host.Producer.ScheduleAsync(new TestJob(2), TimeSpan.FromHours(1));
        var full = await Assert.ThrowsAsync<JobRejectedException>(async () => await host.Producer.EnqueueAsync(new TestJob(3)));
        Assert.Equal(RejectionReason.QueueFull, full.Reason);
        var fullToo = await Assert.ThrowsAsync<JobRejectedException>(async () => await host.Producer.ScheduleAsync(new TestJob(4), TimeSpan.FromHours(1)));
        Assert.Equal(RejectionReason.QueueFull, fullToo.Reason);
    }

    [Fact]
    public async Task ScheduledJob_ConsumerWithALongPoll_WakesAtTheDueTimeNotAtThePoll()
    {
        var log = new JobLog();
        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        log.Behavior = (_, _, _) => { ran.TrySetResult(); return ValueTask.CompletedTask; };

        // Two instances: the one that schedules cannot be the one whose round saw the due time (it may be either).
        await using var consumer = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), instance: "a", configureDurable: d => d.PollInterval = TimeSpan.FromSeconds(55));
        string prefix = consumer.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single().Store.Keys.Stream.ToString().Split(':')[0];
        await using var producer = await DurableTestHost.StartAsync(redis.Server, log, prefix, instance: "b", configure: o => o.MaxWorkers = 1, configureDurable: d => { d.PollInterval = TimeSpan.FromSeconds(55); d.Consume = false; });

        var watch = Stopwatch.StartNew();
        await producer.Producer.ScheduleAsync(new TestJob(1), TimeSpan.FromSeconds(1));
        await Wait.ForAsync(ran.Task, "the job, well before the 55-second poll");
        Assert.True(watch.Elapsed < TimeSpan.FromSeconds(30), $"ran after {watch.Elapsed}");
        Assert.Equal("a", log.Runs.Single().Instance);
    }

    private static RedisStreamStore FindStore(DurableTestHost host) =>
        host.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single().Store;
}
