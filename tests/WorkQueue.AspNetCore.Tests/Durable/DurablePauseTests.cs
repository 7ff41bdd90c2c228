using StackExchange.Redis;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Pausing one instance of a durable queue: it stops taking work and hands back what it fetched and has not started, so
/// the other instances run it; nothing stays pending on the paused one.
/// </summary>
public sealed class DurablePauseTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task Pause_HandsBackThePrefetchAndStopsFetching_SoAnotherInstanceRunsTheJobs()
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 0 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        Action<WorkQueueOptions> oneAtATime = o =>
        {
            o.MinWorkers = 1;
            o.MaxWorkers = 1;
            o.MaxConcurrency = 1;
        };
        await using var paused = await DurableTestHost.StartAsync(redis.Server, log, prefix, "paused", oneAtATime);
        await paused.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 0 to start");
        for (int n = 1; n <= 10; n++)
        {
            await paused.Producer.EnqueueAsync(new TestJob(n));
        }

        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 11, "jobs 1-10 prefetched behind job 0");

        paused.Control.Pause();

        // Handed back at once (not after a claim timeout): only the running job stays pending here.
        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 1, "jobs 1-10 handed back", TimeSpan.FromSeconds(10));

        // Enqueued through the paused instance: it stores them, and fetches none of them.
        for (int n = 11; n <= 40; n++)
        {
            await paused.Producer.EnqueueAsync(new TestJob(n));
        }

        await using var other = await DurableTestHost.StartAsync(redis.Server, log, prefix, "other");
        await log.WaitUntilAsync(() => log.Completed == 40, "the other instance to run jobs 1-40 while job 0 still runs", TimeSpan.FromSeconds(20));
        Assert.All(log.Runs.Where(r => r.Job.N > 0), r => Assert.Equal("other", r.Instance));
        Assert.All(Enumerable.Range(1, 40), n => Assert.Equal(1, log.CallsOf(n)));
        Assert.True(paused.Control.GetSnapshot().IsPaused);

        release.SetResult();
        await Wait.UntilAsync(() => paused.Control.GetSnapshot().Totals.Succeeded == 1, "job 0 to finish on the paused instance");
        var totals = paused.Control.GetSnapshot().Totals;
        Assert.True(totals is { Enqueued: 11, Succeeded: 1, Returned: 10 }, $"Expected 11 fetched, 1 succeeded and 10 returned on the paused instance; totals: {totals}.");

        // Resumed, it takes work again.
        await other.Host.StopAsync();
        paused.Control.Resume();
        await paused.Producer.EnqueueAsync(new TestJob(41));
        await log.WaitUntilAsync(() => log.CallsOf(41) == 1 && log.Completed == 42, "the resumed instance to run job 41");
        Assert.Equal("paused", log.Runs.Single(r => r.Job.N == 41).Instance);
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(stream) == 0, "the stream to be empty");
    }
}
