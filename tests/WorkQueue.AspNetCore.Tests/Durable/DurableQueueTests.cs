using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Options;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>Durable queues end to end on a real redis-server: enqueue, run, acknowledge, retry, dead letters, bad input.</summary>
public sealed class DurableQueueTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task EnqueueAsync_ConcurrentProducers_EveryJobRunsOnceAndTheStreamEmpties()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix);
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();

        var ids = await Task.WhenAll(Enumerable.Range(0, 500).Select(async n => await host.Producer.EnqueueAsync(new TestJob(n))));

        Assert.Equal(500, ids.Distinct().Count());
        await log.WaitUntilAsync(() => log.Completed == 500, "500 jobs completed");
        Assert.All(Enumerable.Range(0, 500), n => Assert.Equal(1, log.CallsOf(n)));

        // Completed entries are acknowledged and deleted: Redis does not keep the history.
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(DurableTestHost.StreamKey(prefix)) == 0, "the stream to be empty");
        var totals = host.Control.GetSnapshot().Totals;
        Assert.Equal(500, totals.Enqueued);
        Assert.Equal(500, totals.Succeeded);
    }

    [Fact]
    public async Task Snapshot_HasThisConsumerAndTheClusterWideFiguresFromRedis()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 0 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o => o.MaxConcurrency = 1);
        await host.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 0 to start");
        for (int n = 1; n < 4; n++)
        {
            await host.Producer.EnqueueAsync(new TestJob(n));
        }

        // Job 0 runs and jobs 1-3 wait behind it in the prefetch.
        await Eventually.HoldsAsync(
            () => Task.FromResult(host.Control.GetSnapshot().Durable is { StreamLength: 4, Pending: 4, HeldHere: 4, IsConnected: true }),
            "4 unfinished, fetched and held here");
        var durable = host.Control.GetSnapshot().Durable!;
        var consumer = Assert.Single(durable.Consumers);
        Assert.Equal(durable.ConsumerName, consumer.Name);
        Assert.True(consumer.IsThisProcess);
        Assert.Equal(4, consumer.Pending);
        Assert.Contains($":{Environment.ProcessId}:", durable.ConsumerName);
        Assert.Equal(3, host.Control.GetSnapshot().Depth);
        release.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 4, "the four jobs");
    }

    [Fact]
    public async Task PrefetchFullPastThePollInterval_StoreThreadWaitsForRoomInsteadOfSpinning()
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 1 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o => o.MaxConcurrency = 1, configureDurable: d =>
        {
            d.Prefetch = 1;
            d.PollInterval = TimeSpan.FromMilliseconds(20);
        });
        var store = host.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single().Store;
        await host.Producer.EnqueueAsync(new TestJob(1));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 1 to start");
        await host.Producer.EnqueueAsync(new TestJob(2));
        await host.Producer.EnqueueAsync(new TestJob(3));
        await Wait.UntilAsync(() => store.Held == 2, "the prefetch of one to fill behind the running job");

        // A full prefetch (jobs slower than the poll interval) has no room to fetch into: the store
        // sleeps until a job leaves it. Proving that it does not spin needs a window; 25 poll intervals here, in which a
        // sleeping store turns a handful of times (heartbeats, notifications) and a spinning one hundreds of thousands.
        long before = store.Turns;
        await Task.Delay(TimeSpan.FromMilliseconds(500));
        long turns = store.Turns - before;
        Assert.True(turns < 100, $"The store's thread went round its loop {turns} times in 500 ms with nothing to do.");

        // A job leaving the prefetch wakes the store, which fetches the next.
        release.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 3, "the three jobs once job 1 ended");
    }

    [Fact]
    public async Task Idle_BetweenPolls_StoreThreadSleepsUntilTheNextInsteadOfSpinning()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configureDurable: d => d.PollInterval = TimeSpan.FromMilliseconds(20));
        var store = host.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single().Store;
        await host.Producer.EnqueueAsync(new TestJob(1));
        await log.WaitUntilAsync(() => log.Completed == 1, "job 1 to run, so the queue is up");

        // An idle queue turns once a poll (and a heartbeat, a notification): a 20 ms poll interval makes about 50 polls
        // in this window. A store that wakes a fraction of a millisecond before a poll is due and then waits "0 ms"
        // (the wait in whole milliseconds) spins until it is: hundreds of turns a poll.
        long before = store.Turns;
        await Task.Delay(TimeSpan.FromSeconds(1));
        long turns = store.Turns - before;
        Assert.True(turns < 500, $"The idle store's thread went round its loop {turns} times in 1 s with a 20 ms poll interval.");
    }

    [Fact]
    public async Task EnqueueAsync_ManyConcurrentEnqueues_AreBatchedIntoFewRoundTrips()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix);
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var server = redisClient.GetServer(redisClient.GetEndPoints()[0]);
        host.Control.Pause();
        long before = await ScriptCallsAsync(server);

        await Task.WhenAll(Enumerable.Range(0, 2_000).Select(async n => await host.Producer.EnqueueAsync(new TestJob(n))));

        long calls = await ScriptCallsAsync(server) - before;

        // Every script call counts here (fetches and heartbeats too); one call per job would be 2,000.
        Assert.True(calls < 200, $"2,000 concurrent enqueues took {calls} script calls.");
        host.Control.Resume();
        await log.WaitUntilAsync(() => log.Completed == 2_000, "2,000 jobs completed");
    }

    [Fact]
    public async Task FailingJob_IsRetriedThroughRedisThenDeadLetteredWithItsError()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog { Behavior = static (job, call, _) => throw new InvalidOperationException($"attempt {call} of job {job.N} failed") };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o =>
        {
            o.Retry.MaxAttempts = 3;
            o.Retry.BaseDelay = TimeSpan.FromMilliseconds(50);
            o.Retry.MaxDelay = TimeSpan.FromMilliseconds(100);
        });
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();

        string id = await host.Producer.EnqueueAsync(new TestJob(7));

        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(DurableTestHost.DeadKey(prefix)) == 1, "one dead letter");
        Assert.Equal(3, log.CallsOf(7));
        var dead = (await db.StreamRangeAsync(DurableTestHost.DeadKey(prefix))).Single();
        Assert.Equal(id, (string?)dead["j"]);
        Assert.Equal("3", (string?)dead["a"]);
        Assert.Equal("failed", (string?)dead["r"]);
        Assert.Contains("attempt 3 of job 7 failed", (string?)dead["e"]);
        Assert.Contains("\"n\":7", (string?)dead["p"]);
        Assert.Equal(0, await db.StreamLengthAsync(DurableTestHost.StreamKey(prefix)));
        Assert.Equal(0, await db.SortedSetLengthAsync(DurableTestHost.DelayedKey(prefix)));
        var totals = host.Control.GetSnapshot().Totals;
        Assert.Equal(2, totals.Retried);
        Assert.Equal(1, totals.DeadLettered);
    }

    [Fact]
    public async Task FailingOnce_RetryWaitsInTheDelayedSetThenSucceeds()
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (_, call, _) => call == 1 ? throw new InvalidOperationException("first try fails") : ValueTask.CompletedTask };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o =>
        {
            o.Retry.MaxAttempts = 2;
            o.Retry.BaseDelay = TimeSpan.FromSeconds(1);
            o.Retry.MaxDelay = TimeSpan.FromSeconds(1);
        });
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();

        await host.Producer.EnqueueAsync(new TestJob(1));

        // While it waits for its due time the retry is in Redis, not in this process's memory.
        await Eventually.HoldsAsync(async () => await db.SortedSetLengthAsync(DurableTestHost.DelayedKey(prefix)) == 1, "the retry in the delayed set");
        Assert.Equal(0, await db.StreamLengthAsync(DurableTestHost.StreamKey(prefix)));
        await log.WaitUntilAsync(() => log.Completed == 1, "the retry to succeed");
        Assert.Equal(2, log.CallsOf(1));
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(DurableTestHost.StreamKey(prefix)) == 0, "the stream to be empty");
        Assert.Equal(0, await db.StreamLengthAsync(DurableTestHost.DeadKey(prefix)));
    }

    [Fact]
    public async Task UnreadablePayload_IsDeadLetteredWithAClearError_AndTheQueueGoesOn()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        var logs = new LogCapture();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, logs: logs);
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();

        // What a schema change or a foreign writer leaves in the stream.
        await db.StreamAddAsync(DurableTestHost.StreamKey(prefix), [new("p", "{\"n\": \"not a number\""), new("a", "1"), new("t", "0")]);
        await host.Producer.EnqueueAsync(new TestJob(2));

        await log.WaitUntilAsync(() => log.Completed == 1, "the good job to run");
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(DurableTestHost.DeadKey(prefix)) == 1, "the bad entry dead-lettered");
        var dead = (await db.StreamRangeAsync(DurableTestHost.DeadKey(prefix))).Single();
        Assert.Equal("unreadable", (string?)dead["r"]);
        Assert.Contains(typeof(TestJob).FullName!, (string?)dead["e"]);
        Assert.Single(log.Runs);
        Assert.Contains(logs.Entries, e => e.EventId.Name == "DurableUnreadable");
    }

    [Fact]
    public async Task Capacity_CountsUnfinishedJobsInRedis_AndRejectsBeyondIt()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o =>
        {
            o.Capacity = 3;
            o.FullMode = QueueFullMode.Reject;
        });
        host.Control.Pause();

        for (int n = 0; n < 3; n++)
        {
            await host.Producer.EnqueueAsync(new TestJob(n));
        }

        var rejected = await Assert.ThrowsAsync<JobRejectedException>(async () => await host.Producer.EnqueueAsync(new TestJob(3)));
        Assert.Equal(RejectionReason.QueueFull, rejected.Reason);
        Assert.Contains("3 unfinished", rejected.Message);
        host.Control.Resume();
        await log.WaitUntilAsync(() => log.Completed == 3, "the three accepted jobs");
    }

    [Fact]
    public async Task Stop_WhileAnEnqueueWaitsForRoom_RefusesIt_AndTheStoreThreadEnds()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o => o.Capacity = 1);
        var store = host.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single().Store;
        host.Control.Pause();
        await host.Producer.EnqueueAsync(new TestJob(1));

        // The queue is full in Redis (job 1 stays there: paused here, handed back at the stop) and no other instance
        // consumes it, so job 2 can only wait for room, in Wait mode without an EnqueueTimeout.
        var waiting = host.Producer.EnqueueAsync(new TestJob(2)).AsTask();
        await host.Host.StopAsync();

        // Refused once the queue has stopped here (room could only come from another instance), as a new enqueue is;
        // the store's thread ends instead of going round its loop.
        var rejected = await Assert.ThrowsAsync<JobRejectedException>(() => waiting.WaitAsync(Wait.Generous));
        Assert.Equal(RejectionReason.QueueStopped, rejected.Reason);
        long turns = store.Turns;
        await Task.Delay(TimeSpan.FromMilliseconds(200));
        Assert.Equal(turns, store.Turns);
    }

    [Fact]
    public async Task EnqueueAsync_WhenRedisIsDown_FailsWithStoreUnavailable_AndWorksAgainWhenItIsBack()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        var own = await RedisServer.StartAsync();
        int port = own.Port;
        await using var host = await DurableTestHost.StartAsync(own, log, prefix);
        await host.Producer.EnqueueAsync(new TestJob(1));
        await log.WaitUntilAsync(() => log.Completed == 1, "the first job");

        var health = host.Services.GetRequiredService<HealthCheckService>();
        Assert.Equal(HealthStatus.Healthy, (await health.CheckHealthAsync(c => c.Name == "workqueue-durable-jobs")).Status);

        await own.DisposeAsync();
        var rejected = await Assert.ThrowsAsync<JobRejectedException>(async () => await host.Producer.EnqueueAsync(new TestJob(2)));
        Assert.Equal(RejectionReason.StoreUnavailable, rejected.Reason);
        Assert.NotNull(rejected.InnerException);
        await Eventually.HoldsAsync(
            async () => (await health.CheckHealthAsync(c => c.Name == "workqueue-durable-jobs")).Status == HealthStatus.Unhealthy,
            "readiness to report the queue cannot reach Redis");

        // Known unreachable now: refused at once, still with the failure that made it so.
        var refusedAtOnce = await Assert.ThrowsAsync<JobRejectedException>(async () => await host.Producer.EnqueueAsync(new TestJob(3)));
        Assert.Equal(RejectionReason.StoreUnavailable, refusedAtOnce.Reason);
        Assert.NotNull(refusedAtOnce.InnerException);

        await using var again = await RedisServer.StartAsync(port);
        await Eventually.HoldsAsync(async () =>
        {
            try
            {
                await host.Producer.EnqueueAsync(new TestJob(3));
                return true;
            }
            catch (JobRejectedException)
            {
                return false;
            }
        }, "an enqueue to succeed after Redis is back");
        await log.WaitUntilAsync(() => log.CallsOf(3) == 1, "the job enqueued after the restart");
        await Eventually.HoldsAsync(
            async () => (await health.CheckHealthAsync(c => c.Name == "workqueue-durable-jobs")).Status == HealthStatus.Healthy,
            "readiness to recover");
    }

    [Fact]
    public async Task Capacity_WaitMode_EnqueueWaitsForRoomThenSucceeds_OrTimesOutAsQueueFull()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o =>
        {
            o.Capacity = 2;
            o.FullMode = QueueFullMode.Wait;
            o.EnqueueTimeout = TimeSpan.FromSeconds(30);
        });
        host.Control.Pause();
        await host.Producer.EnqueueAsync(new TestJob(0));
        await host.Producer.EnqueueAsync(new TestJob(1));

        var waiting = host.Producer.EnqueueAsync(new TestJob(2)).AsTask();
        using var canceled = new CancellationTokenSource();
        var abandoned = host.Producer.EnqueueAsync(new TestJob(3), canceled.Token).AsTask();
        canceled.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => abandoned);
        Assert.False(waiting.IsCompleted);

        host.Control.Resume();
        await waiting.WaitAsync(TimeSpan.FromSeconds(30));
        await log.WaitUntilAsync(() => log.Completed == 3, "jobs 0-2");

        // The cancelled enqueue never reached Redis: job 3 never runs.
        Assert.Equal(0, log.CallsOf(3));
    }

    [Fact]
    public async Task EnqueueAsync_CancelledWhileItsBatchIsInFlight_EndsCancelled_AndNeverRuns()
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 0 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o =>
        {
            o.Capacity = 1;
            o.FullMode = QueueFullMode.Wait;
            o.EnqueueTimeout = TimeSpan.FromSeconds(30);
        },
        configureDurable: d => d.PollInterval = TimeSpan.FromSeconds(30)); // no poll may be the call in flight
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        await host.Producer.EnqueueAsync(new TestJob(0));
        await Eventually.HoldsAsync(async () => (await redisClient.GetDatabase().StreamPendingAsync(DurableTestHost.StreamKey(prefix), "workers")).PendingMessageCount == 1, "job 0 fetched");

        // Redis busy for a second: the queue's attempts to add job 1 (full, so tried again and again) are in flight
        // when the caller gives up.
        var busy = redisClient.GetDatabase().ScriptEvaluateAsync(
            "local s = redis.call('TIME') local t0 = s[1] * 1000000 + s[2] repeat local t = redis.call('TIME') until t[1] * 1000000 + t[2] - t0 > 1000000 return 1");
        using var canceled = new CancellationTokenSource();
        var enqueue = host.Producer.EnqueueAsync(new TestJob(1), canceled.Token).AsTask();
        await Task.Delay(200);
        canceled.Cancel();
        await busy;

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => enqueue.WaitAsync(TimeSpan.FromSeconds(10)));
        release.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 1, "job 0");
        Assert.Equal(0, log.CallsOf(1));
    }

    [Fact]
    public async Task Capacity_WaitMode_PastEnqueueTimeout_FailsAsQueueFullNamingTheTimeout()
    {
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o =>
        {
            o.Capacity = 1;
            o.FullMode = QueueFullMode.Wait;
            o.EnqueueTimeout = TimeSpan.FromMilliseconds(200);
        });
        host.Control.Pause();
        await host.Producer.EnqueueAsync(new TestJob(0));

        var rejected = await Assert.ThrowsAsync<JobRejectedException>(async () => await host.Producer.EnqueueAsync(new TestJob(1)));

        Assert.Equal(RejectionReason.QueueFull, rejected.Reason);
        Assert.Contains("EnqueueTimeout", rejected.Message);
        host.Control.Resume();
        await log.WaitUntilAsync(() => log.Completed == 1, "job 0");
    }

    [Fact]
    public void AddDurableQueue_DropOldest_IsRefusedAtStartup()
    {
        var host = DurableTestHost.Build(redis.Server, new JobLog(), DurableTestHost.NewPrefix(), configure: o => o.FullMode = QueueFullMode.DropOldest);
        var error = Assert.Throws<OptionsValidationException>(() => host.Services.GetRequiredService<IWorkQueueProvider>());
        Assert.Contains("DropOldest", error.Message);
        Assert.Contains(DurableTestHost.Queue, error.Message);
    }

    [Fact]
    public void AddDurableQueue_HeartbeatLongerThanAThirdOfTheClaimTimeout_IsRefusedNamingBoth()
    {
        var host = DurableTestHost.Build(redis.Server, new JobLog(), DurableTestHost.NewPrefix(), configureDurable: d =>
        {
            d.ClaimTimeout = TimeSpan.FromSeconds(10);
            d.HeartbeatInterval = TimeSpan.FromSeconds(4);
        });
        var error = Assert.Throws<OptionsValidationException>(() => host.Services.GetRequiredService<IOptionsMonitor<DurableQueueOptions>>().Get(DurableTestHost.Queue));
        Assert.Contains("HeartbeatInterval (00:00:04)", error.Message);
        Assert.Contains("ClaimTimeout (00:00:10)", error.Message);
    }

    [Fact]
    public void AddDurableQueue_ClaimTimeoutNotCoveringTheRedisTimeouts_IsRefusedNamingEachSetting()
    {
        var host = DurableTestHost.Build(
            redis.Server,
            new JobLog(),
            DurableTestHost.NewPrefix(),
            configureDurable: d =>
            {
                d.ClaimTimeout = TimeSpan.FromSeconds(10);
                d.HeartbeatInterval = TimeSpan.FromSeconds(3);
            },
            connection: $"{redis.Server.Configuration},syncTimeout=2000,asyncTimeout=5000");
        var error = Assert.Throws<OptionsValidationException>(() => host.Services.GetRequiredService<IOptionsMonitor<DurableQueueOptions>>().Get(DurableTestHost.Queue));
        Assert.Contains("ClaimTimeout (00:00:10)", error.Message);
        Assert.Contains("HeartbeatInterval (00:00:03)", error.Message);
        Assert.Contains("AsyncTimeout (5000 ms)", error.Message);
        Assert.Contains("SyncTimeout (2000 ms)", error.Message);
    }

    [Fact]
    public void AddDurableQueue_ClaimTimeoutCoveringTheRedisTimeouts_IsAccepted()
    {
        var host = DurableTestHost.Build(
            redis.Server,
            new JobLog(),
            DurableTestHost.NewPrefix(),
            configureDurable: d =>
            {
                d.ClaimTimeout = TimeSpan.FromSeconds(10);
                d.HeartbeatInterval = TimeSpan.FromSeconds(3);
            },
            connection: $"{redis.Server.Configuration},syncTimeout=2000,asyncTimeout=3000");
        Assert.Equal(TimeSpan.FromSeconds(10), host.Services.GetRequiredService<IOptionsMonitor<DurableQueueOptions>>().Get(DurableTestHost.Queue).ClaimTimeout);
    }

    [Fact]
    public void AddDurableQueue_DurableConfigurationSection_TunesTheQueueAndIsAccepted()
    {
        // The counterpart of Core's refusal of a Durable section for a queue without a store: on a durable queue it
        // overrides what code set, and the queue's engine options still validate.
        using var host = DurableTestHost.Build(
            redis.Server,
            new JobLog(),
            DurableTestHost.NewPrefix(),
            configureHost: b => b.Configuration.AddInMemoryCollection(new Dictionary<string, string?> { [$"WorkQueue:Queues:{DurableTestHost.Queue}:Durable:PollInterval"] = "00:00:03" }));

        Assert.Equal(TimeSpan.FromSeconds(3), host.Services.GetRequiredService<IOptionsMonitor<DurableQueueOptions>>().Get(DurableTestHost.Queue).PollInterval);
        Assert.True(host.Services.GetRequiredService<IWorkQueueProvider>().TryGetControl(DurableTestHost.Queue, out _));
    }

    [Fact]
    public async Task IWorkQueue_IsResolvedByNameIgnoringCase_AndIsTheDurableQueue()
    {
        // Jobs wait until the key's check is done: a completed job frees its key.
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = async (_, _, _) => await release.Task };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix());

        // The queue's IWorkQueue, by name or keyed, is the durable one: typed-handler producer code stores its jobs.
        IWorkQueue queue = host.Services.GetRequiredService<IWorkQueueProvider>().GetQueue("jobs");
        Assert.Same(queue, host.Services.GetRequiredKeyedService<IWorkQueue>("JOBS"));
        Assert.Equal(DurableTestHost.Queue, queue.Name);
        await queue.EnqueueAsync<TestJobHandler, TestJob>(new TestJob(1));
        var keyed = await queue.EnqueueAsync<TestJobHandler, TestJob>(new TestJob(2), new JobOptions { IdempotencyKey = "k" });
        Assert.True(keyed.Created);
        var again = await queue.EnqueueAsync<TestJobHandler, TestJob>(new TestJob(3), new JobOptions { IdempotencyKey = "k" });
        Assert.Equal((keyed.JobId, false), (again.JobId, again.Created));
        release.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 2, "both stored jobs to run");
        var done = await Eventually.ValueAsync(() => queue.GetJobAsync(keyed.JobId), j => j?.State == JobState.Succeeded, "the keyed job to succeed");
        Assert.Equal(DurableTestHost.Queue, done!.QueueName);
        Assert.Equal(done.Id, (await host.Producer.GetJobAsync(keyed.JobId))!.Id);
        Assert.Equal([1, 2], log.Runs.Select(r => r.Job.N).Order());
    }

    [Fact]
    public async Task GetInMemoryQueue_DurableQueue_ThrowsNamingTheQueueAndSayingItIsDurable()
    {
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix());
        var queues = host.Services.GetRequiredService<IWorkQueueProvider>();

        var error = Assert.Throws<InvalidOperationException>(() => queues.GetInMemoryQueue("JOBS"));
        var keyed = Assert.Throws<InvalidOperationException>(() => host.Services.GetRequiredKeyedService<IInMemoryWorkQueue>("jobs"));

        Assert.Contains($"Queue '{DurableTestHost.Queue}' is durable", error.Message);
        Assert.Contains("typed-handler jobs only, through IWorkQueue", error.Message);
        Assert.Equal(error.Message, keyed.Message);
    }

    private static async Task<long> ScriptCallsAsync(IServer server)
    {
        var info = await server.InfoAsync("commandstats");
        long calls = 0;
        foreach (var pair in info.SelectMany(g => g))
        {
            if (pair.Key is "cmdstat_eval" or "cmdstat_evalsha")
            {
                calls += long.Parse(pair.Value.Split(',')[0].Split('=')[1]);
            }
        }

        return calls;
    }
}
