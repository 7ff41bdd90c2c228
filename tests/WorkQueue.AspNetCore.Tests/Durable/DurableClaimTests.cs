using StackExchange.Redis;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// What happens to jobs when a consumer dies, hangs or stops: reclaim, poison, heartbeats and hand-back at a graceful
/// stop. A dead consumer is what a SIGKILL leaves in Redis: entries pending on a consumer that never comes back.
/// </summary>
public sealed class DurableClaimTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task JobsPendingOnADeadConsumer_AreReclaimedAndRunBySurvivor()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await using (var first = await DurableTestHost.StartAsync(redis.Server, log, prefix, "first"))
        {
            first.Control.Pause();
            for (int n = 0; n < 5; n++)
            {
                await first.Producer.EnqueueAsync(new TestJob(n));
            }

            await first.Host.StopAsync();
        }

        // The crash: a consumer takes the entries and is never heard of again.
        var taken = await db.StreamReadGroupAsync(stream, "workers", "ghost", ">", count: 10);
        Assert.Equal(5, taken.Length);

        await using var survivor = await DurableTestHost.StartAsync(redis.Server, log, prefix, "survivor", configureDurable: DurableClaims.Fast);

        await log.WaitUntilAsync(() => log.Completed == 5, "the survivor to run the dead consumer's 5 jobs");
        Assert.All(log.Runs, r => Assert.Equal("survivor", r.Instance));
        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 0, "nothing pending");
        Assert.Equal(0, await db.StreamLengthAsync(stream));
    }

    [Fact]
    public async Task DeadConsumersJob_UnderASteadyBacklog_IsReclaimedAheadOfNewerJobs()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog { Behavior = static async (_, _, ct) => await Task.Delay(150, ct) };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await db.StreamCreateConsumerGroupAsync(stream, "workers", StreamPosition.Beginning, createStream: true);
        await db.StreamAddAsync(stream, [new("p", "{\"n\":-1}"), new("a", "1"), new("t", "0")]);

        // The crash: a consumer took the oldest job and is never heard of again; 60 newer jobs wait behind it.
        Assert.Single(await db.StreamReadGroupAsync(stream, "workers", "ghost", ">", count: 1));
        for (int n = 0; n < 60; n++)
        {
            await db.StreamAddAsync(stream, [new("p", $"{{\"n\":{n}}}"), new("a", "1"), new("t", "0")]);
        }

        await using var survivor = await DurableTestHost.StartAsync(
            redis.Server,
            log,
            prefix,
            "survivor",
            o =>
            {
                o.MinWorkers = 1;
                o.MaxWorkers = 1;
                o.MaxConcurrency = 1;
            },
            d =>
            {
                DurableClaims.Fast(d);
                d.Prefetch = 1;
            });

        await log.WaitUntilAsync(() => log.Completed == 61, "the survivor to run all 61 jobs");

        // Within about a claim timeout (1 s, some 7 jobs of 150 ms), not after the whole backlog (61st, 9 s in).
        int position = log.Runs.Select(r => r.Job.N).ToList().IndexOf(-1) + 1;
        Assert.True(position is > 0 and <= 30, $"The dead consumer's job ran {position}th of 61.");
    }

    [Fact]
    public async Task EntryDeliveredMoreThanMaxDeliveries_IsDeadLetteredAsPoisonWithoutRunning()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await db.StreamCreateConsumerGroupAsync(stream, "workers", StreamPosition.Beginning, createStream: true);
        await db.StreamAddAsync(stream, [new("p", "{\"n\":9}"), new("a", "1"), new("t", "0")]);

        // Two consumers took it and died (a job that crashes its process every time).
        var first = await db.StreamReadGroupAsync(stream, "workers", "ghost-1", ">", count: 1);
        await db.StreamClaimAsync(stream, "workers", "ghost-2", 0, [first[0].Id]);

        await using var survivor = await DurableTestHost.StartAsync(redis.Server, log, prefix, "survivor", configureDurable: d =>
        {
            DurableClaims.Fast(d);
            d.MaxDeliveries = 2;
        });

        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(DurableTestHost.DeadKey(prefix)) == 1, "the poison entry dead-lettered");
        var dead = (await db.StreamRangeAsync(DurableTestHost.DeadKey(prefix))).Single();
        Assert.Equal("poison", (string?)dead["r"]);
        Assert.Contains("Delivered 3 times", (string?)dead["e"]);
        Assert.Empty(log.Runs);
        Assert.Equal(0, await db.StreamLengthAsync(stream));
    }

    [Fact]
    public async Task RunningJob_KeepsItsClaimAlivePastTheClaimTimeout_AndIsNeverRunTwice()
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (_, _, _) => new ValueTask(release.Task) };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await using var busy = await DurableTestHost.StartAsync(redis.Server, log, prefix, "busy", configureDurable: DurableClaims.Live);
        await using var other = await DurableTestHost.StartAsync(redis.Server, log, prefix, "other", configureDurable: DurableClaims.Live);

        await busy.Producer.EnqueueAsync(new TestJob(1));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "the long job to start");

        // Three claim timeouts: without heartbeats the other instance would have reclaimed it twice over.
        var until = DateTime.UtcNow + TimeSpan.FromSeconds(6);
        long maxIdle = 0;
        while (DateTime.UtcNow < until)
        {
            var pending = await db.StreamPendingMessagesAsync(stream, "workers", 10, RedisValue.Null);
            if (pending.Length != 1)
            {
                var entries = await db.StreamRangeAsync(stream);
                Assert.Fail($"pending: {string.Join("; ", pending.Select(p => $"{p.MessageId} {p.ConsumerName} d={p.DeliveryCount} idle={p.IdleTimeInMilliseconds}"))} stream: {string.Join("; ", entries.Select(e => $"{e.Id} {string.Join(",", e.Values.Select(v => $"{v.Name}={v.Value}"))}"))} runs: {string.Join(",", log.Runs.Select(r => r.Instance))}");
            }

            Assert.Equal(1, pending[0].DeliveryCount);
            maxIdle = Math.Max(maxIdle, pending[0].IdleTimeInMilliseconds);
            await Task.Delay(50);
        }

        release.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 1, "the long job to finish");
        Assert.Single(log.Runs);
        Assert.True(maxIdle < 2_000, $"The running job's claim went {maxIdle} ms without a heartbeat.");
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(stream) == 0, "the stream to be empty");
    }

    [Fact]
    public async Task GracefulStop_HandsBackUnstartedJobsAtOnce_AndFinishesTheRunningOne()
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 0 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        var stopping = await DurableTestHost.StartAsync(redis.Server, log, prefix, "stopping", configure: o =>
        {
            o.MinWorkers = 1;
            o.MaxWorkers = 1;
            o.MaxConcurrency = 1;
        });
        await stopping.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 0 to start");
        for (int n = 1; n <= 4; n++)
        {
            await stopping.Producer.EnqueueAsync(new TestJob(n));
        }

        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 5, "jobs 1-4 prefetched behind job 0");

        var stop = stopping.Host.StopAsync(CancellationToken.None);

        // Handed back before the running job ends, as new entries any consumer reads at once: 1 pending, 4 undelivered
        // (their old entries, acknowledged, wait behind job 0 for the trim: 9 in the stream).
        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 1, "jobs 1-4 handed back");
        long length = await db.StreamLengthAsync(stream);
        long? lag = Assert.Single(await db.StreamGroupInfoAsync(stream)).Lag;
        Assert.True(length == 9 && lag == 4, $"Expected 1 pending + 4 handed back (lag 4) and their 4 old entries in the stream, found {length} entries, lag {lag}; runs: {string.Join(",", log.Runs.Select(r => r.Job.N))}.");
        Assert.False(stop.IsCompleted, $"The host stopped while job 0 still ran (stop task: {stop.Status}, {stop.Exception?.GetBaseException().Message}).");
        release.SetResult();
        await stop;
        var totals = stopping.Control.GetSnapshot().Totals;
        Assert.True(
            totals is { Succeeded: 1, Returned: 4, Abandoned: 0 },
            $"Expected 1 succeeded, 4 returned, 0 abandoned; totals: {totals}.");
        stopping.Host.Dispose();

        await using var next = await DurableTestHost.StartAsync(redis.Server, log, prefix, "next");
        await log.WaitUntilAsync(() => log.Completed == 5, "the next instance to run jobs 1-4");
        Assert.All(Enumerable.Range(0, 5), n => Assert.Equal(1, log.CallsOf(n)));
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(stream) == 0, "the stream to be empty");
    }

    [Fact]
    public async Task ProducerOnlyInstance_EnqueuesButNeverRunsOrJoinsTheGroup()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        await using var front = await DurableTestHost.StartAsync(redis.Server, log, prefix, "front", configureDurable: d => d.Consume = false);
        for (int n = 0; n < 20; n++)
        {
            await front.Producer.EnqueueAsync(new TestJob(n));
        }

        await using var worker = await DurableTestHost.StartAsync(redis.Server, log, prefix, "worker");
        await log.WaitUntilAsync(() => log.Completed == 20, "the worker to run the front end's 20 jobs");

        Assert.All(log.Runs, r => Assert.Equal("worker", r.Instance));
        var consumers = await redisClient.GetDatabase().StreamConsumerInfoAsync(DurableTestHost.StreamKey(prefix), "workers");
        var only = Assert.Single(consumers);
        Assert.Equal(worker.Control.GetSnapshot().Durable!.ConsumerName, only.Name);
        Assert.Equal(0, front.Control.GetSnapshot().Totals.Enqueued);
    }
}
