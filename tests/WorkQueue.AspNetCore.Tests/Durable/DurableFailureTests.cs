using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Durable queues when things go wrong: a payload type that throws while it is read, Redis refusing writes, Redis losing
/// its data, retries, a stop while producers wait for room, Redis gone, and fairness between producers waiting for room.
/// </summary>
public sealed class DurableFailureTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task PayloadWhoseConstructorThrows_IsDeadLettered_AndTheQueueStaysUpAndReady()
    {
        string prefix = DurableTestHost.NewPrefix();
        var ran = new List<int>();
        await using var host = await DurableTestHost.StartAsync(
            redis.Server.Configuration,
            "a",
            workQueue => workQueue.AddDurableQueue<StrictJobHandler, StrictJob>("strict", configureDurable: d =>
            {
                d.KeyPrefix = prefix;
                d.PollInterval = TimeSpan.FromMilliseconds(100);
            }),
            b => b.Services.AddSingleton(ran));
        var producer = host.Services.GetRequiredKeyedService<IWorkQueue>("strict");
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();

        // Valid JSON that the type itself refuses (its constructor throws ArgumentOutOfRangeException, not JsonException).
        await db.StreamAddAsync($"{prefix}:{{strict}}:stream", [new("p", "{\"n\":-1}"), new("a", "1"), new("t", "0")]);
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync($"{prefix}:{{strict}}:dead") == 1, "the bad entry dead-lettered");

        await producer.EnqueueAsync<StrictJobHandler, StrictJob>(new StrictJob(5));
        await Eventually.HoldsAsync(() => Task.FromResult(Snapshot(ran).Contains(5)), "a good job to run after the bad one");
        var dead = (await db.StreamRangeAsync($"{prefix}:{{strict}}:dead")).Single();
        Assert.Equal("unreadable", (string?)dead["r"]);
        Assert.Contains("ArgumentOutOfRangeException", (string?)dead["e"]);
        var health = await host.Services.GetRequiredService<HealthCheckService>().CheckHealthAsync(c => c.Name == "workqueue-durable-strict");
        Assert.Equal(HealthStatus.Healthy, health.Status);
    }

    [Fact]
    public async Task PayloadWhoseConstructorBlocks_StoreThreadStuck_ReadinessUnhealthyUntilItGoesRoundAgain()
    {
        // The store's thread reads payloads (System.Text.Json calls the type's constructor there). One that blocks stops
        // the thread without an error: no heartbeat, no fetch, no settle, while the last Redis call succeeded.
        string prefix = DurableTestHost.NewPrefix();
        using var gate = new ManualResetEventSlim();
        await using var host = await DurableTestHost.StartAsync(
            redis.Server.Configuration + ",syncTimeout=1000,asyncTimeout=1000",
            "a",
            workQueue => workQueue.AddDurableQueue<BlockingJobHandler, BlockingJob>("blocking", configureDurable: d =>
            {
                d.KeyPrefix = prefix;
                d.PollInterval = TimeSpan.FromMilliseconds(100);
                d.HeartbeatInterval = TimeSpan.FromMilliseconds(500);
                d.ClaimTimeout = TimeSpan.FromSeconds(2);
            }),
            b => b.Services.AddSingleton(gate));
        var checks = host.Services.GetRequiredService<HealthCheckService>();
        Task<HealthReport> ReadinessAsync() => checks.CheckHealthAsync(c => c.Name == "workqueue-durable-blocking");

        // Ready once the store's thread has made its first pass (on a busy machine that can come after StartAsync returns).
        await Eventually.ValueAsync(() => new ValueTask<HealthReport>(ReadinessAsync()), r => r.Status == HealthStatus.Healthy, "readiness after the first pass");

        // Idle for longer than ClaimTimeout: the thread still goes round (heartbeats, polls), so it stays ready.
        var idleUntil = DateTime.UtcNow.AddSeconds(3);
        while (DateTime.UtcNow < idleUntil)
        {
            var idle = await ReadinessAsync();
            Assert.True(idle.Status == HealthStatus.Healthy, $"An idle queue turned {idle.Status}: {idle.Entries.Single().Value.Description}");
            await Task.Delay(100);
        }

        BlockingJob.Gate = gate;
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        await redisClient.GetDatabase().StreamAddAsync($"{prefix}:{{blocking}}:stream", [new("p", "{\"n\":-1}"), new("a", "1"), new("t", "0")]);
        try
        {
            var stuck = await Eventually.ValueAsync(() => new ValueTask<HealthReport>(ReadinessAsync()), r => r.Status == HealthStatus.Unhealthy, "readiness to see the stuck thread");
            Assert.Contains("has not gone round", stuck.Entries.Single().Value.Description);
        }
        finally
        {
            gate.Set();
        }

        await Eventually.ValueAsync(() => new ValueTask<HealthReport>(ReadinessAsync()), r => r.Status == HealthStatus.Healthy, "readiness once the thread goes round again");
    }

    [Fact]
    public async Task RedisRefusingAnOutcome_DoesNotStopHeartbeats_SoARunningJobIsNotRunTwice()
    {
        await using var own = await RedisServer.StartAsync();
        string prefix = DurableTestHost.NewPrefix();
        var gate7 = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var gate8 = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog
        {
            Behavior = async (job, call, _) =>
            {
                if (job.N == 7)
                {
                    await gate7.Task;
                }
                else if (call == 1)
                {
                    await gate8.Task;
                    throw new InvalidOperationException("job 8 fails once");
                }
            },
        };
        Action<WorkQueueOptions> engine = o =>
        {
            o.MaxConcurrency = 4;
            o.Retry.MaxAttempts = 2;
            o.Retry.BaseDelay = TimeSpan.FromMilliseconds(10);
        };
        await using var a = await DurableTestHost.StartAsync(own, log, prefix, "a", engine, DurableClaims.Live);
        string id7 = await a.Producer.EnqueueAsync(new TestJob(7));
        await a.Producer.EnqueueAsync(new TestJob(8));
        await log.WaitUntilAsync(() => log.Runs.Count == 2, "jobs 7 and 8 to start on a");
        await using var b = await DurableTestHost.StartAsync(own, log, prefix, "b", engine, DurableClaims.Live);
        await using var admin = await DurableTestHost.ConnectAsync(own);
        var server = admin.GetServer(admin.GetEndPoints()[0]);

        // Out of memory: Redis refuses job 8's move to the delayed set, again and again.
        await server.ConfigSetAsync("maxmemory", "1");
        await server.ConfigSetAsync("maxmemory-policy", "noeviction");
        gate8.SetResult();
        var until = DateTime.UtcNow + TimeSpan.FromSeconds(6);
        while (DateTime.UtcNow < until)
        {
            var seven = await admin.GetDatabase().StreamPendingMessagesAsync(DurableTestHost.StreamKey(prefix), "workers", 1, RedisValue.Null, id7, id7);

            // Reclaimed by b would mean a second delivery.
            Assert.Equal(1, Assert.Single(seven).DeliveryCount);
            await Task.Delay(100);
        }

        Assert.Equal(1, log.CallsOf(7));
        await server.ConfigSetAsync("maxmemory", "0");
        await log.WaitUntilAsync(() => log.CallsOf(8) == 2, "job 8's retry once Redis takes writes again");
        gate7.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 2, "jobs 7 and 8 to complete");
        Assert.Equal(1, log.CallsOf(7));
    }

    [Fact]
    public async Task RedisLosesItsData_JobsHeldHereAreStoredAgain_AndEachRunsOnce()
    {
        await using var own = await RedisServer.StartAsync();
        string prefix = DurableTestHost.NewPrefix();
        var gate0 = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog
        {
            Behavior = async (job, call, _) =>
            {
                if (job.N == 0 && call == 1)
                {
                    await gate0.Task;
                    throw new InvalidOperationException("job 0 fails once");
                }
            },
        };
        var logs = new LogCapture();
        await using var host = await DurableTestHost.StartAsync(
            own,
            log,
            prefix,
            "a",
            o =>
            {
                o.MinWorkers = 1;
                o.MaxWorkers = 1;
                o.MaxConcurrency = 1;
                o.Retry.MaxAttempts = 2;
                o.Retry.BaseDelay = TimeSpan.FromMilliseconds(10);
            },
            DurableClaims.Live,
            logs);
        await using var admin = await DurableTestHost.ConnectAsync(own);
        var db = admin.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await host.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 0 to start");
        for (int n = 1; n <= 5; n++)
        {
            await host.Producer.EnqueueAsync(new TestJob(n));
        }

        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 6, "jobs 1-5 prefetched behind job 0");

        // A restart without persistence, or a failover to an empty replica: this process still holds the six jobs.
        await admin.GetServer(admin.GetEndPoints()[0]).FlushAllDatabasesAsync();

        // The five not started are stored again at once (new entries any consumer can run).
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(stream) == 5, "jobs 1-5 stored again", TimeSpan.FromSeconds(10));

        // The running one is stored again by its outcome: a retry here.
        gate0.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 6 && log.CallsOf(0) == 2, "jobs 1-5 and job 0's retry to run");
        Assert.All(Enumerable.Range(1, 5), n => Assert.Equal(1, log.CallsOf(n)));
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(stream) == 0 && await db.SortedSetLengthAsync(DurableTestHost.DelayedKey(prefix)) == 0, "the stream and the delayed set to be empty");
        Assert.DoesNotContain(logs.Entries, e => e.EventId.Id == 504);
        Assert.Contains(logs.Entries, e => e.EventId.Id == 511 && e.Message.Contains("5 not started", StringComparison.Ordinal));
    }

    /// <summary>
    /// A job running when Redis lost its data is stored again by its outcome, even when a completion on the new stream
    /// (which raises its max-deleted-entry-id above every id from before the loss) comes first: the heartbeat found it
    /// lost, and the retry says so instead of letting the script decide again (it would answer "another consumer owns
    /// it", and the job would be lost).
    /// </summary>
    [Fact]
    public async Task RedisLosesItsData_ACompletionComesBeforeTheRunningJobFails_ItsRetryIsStillStored()
    {
        await using var own = await RedisServer.StartAsync();
        string prefix = DurableTestHost.NewPrefix();
        var gate0 = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog
        {
            Behavior = async (job, call, _) =>
            {
                if (job.N == 0 && call == 1)
                {
                    await gate0.Task;
                    throw new InvalidOperationException("job 0 fails once");
                }
            },
        };
        var logs = new LogCapture();
        await using var host = await DurableTestHost.StartAsync(
            own,
            log,
            prefix,
            "a",
            o =>
            {
                o.MinWorkers = 2;
                o.MaxWorkers = 2;
                o.Retry.MaxAttempts = 2;
                o.Retry.BaseDelay = TimeSpan.FromMilliseconds(10);
            },
            DurableClaims.Live,
            logs);
        await using var admin = await DurableTestHost.ConnectAsync(own);
        var db = admin.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await host.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 0 to start");

        // A restart without persistence: job 0 runs here, Redis no longer has it; the heartbeat finds it vanished.
        await admin.GetServer(admin.GetEndPoints()[0]).FlushAllDatabasesAsync();
        await Eventually.HoldsAsync(() => Task.FromResult(logs.Entries.Any(e => e.EventId.Id == 511 && e.Message.Contains("1 running", StringComparison.Ordinal))), "job 0 found vanished while it runs");

        // Life goes on: a new job runs and completes (acknowledged and deleted from the new stream).
        await host.Producer.EnqueueAsync(new TestJob(1));
        await log.WaitUntilAsync(() => log.CallsOf(1) == 1 && log.Completed == 1, "job 1 to complete");
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(stream) == 0, "job 1 acknowledged and deleted");

        // Job 0 fails: its outcome (a retry) must store it again, so it runs a second time.
        gate0.SetResult();
        await log.WaitUntilAsync(() => log.CallsOf(0) == 2, "job 0's retry to run", TimeSpan.FromSeconds(15));
    }

    /// <summary>
    /// With several instances, the one that recreates the group after Redis lost its data is not the only one holding
    /// jobs. Another instance sees no NOGROUP (the group exists again) and looks at its held entries at its next
    /// heartbeat; a completion that deleted an entry of the new stream by then must not make them look "reclaimed by
    /// another consumer" (log 504, the unstarted ones dropped and never run anywhere): the queue's epoch changed, so they
    /// were lost (511). Here the other instance's work (recreate the group, add a job, complete it) is one atomic script
    /// right after the flush, so the interleaving is deterministic; it writes no epoch (an instance of an older version).
    /// </summary>
    [Fact]
    public async Task RedisLosesItsData_AnotherInstanceCompletesAJobFirst_JobsHeldHereAreStillStoredAgain()
    {
        await using var own = await RedisServer.StartAsync();
        string prefix = DurableTestHost.NewPrefix();
        var gate0 = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog
        {
            Behavior = async (job, _, _) =>
            {
                if (job.N == 0)
                {
                    await gate0.Task;
                }
            },
        };
        var logs = new LogCapture();
        await using var host = await DurableTestHost.StartAsync(
            own,
            log,
            prefix,
            "a",
            o =>
            {
                o.MinWorkers = 1;
                o.MaxWorkers = 1;
                o.MaxConcurrency = 1;
            },
            DurableClaims.Live,
            logs);
        await using var admin = await DurableTestHost.ConnectAsync(own);
        var db = admin.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await host.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 0 to start");
        for (int n = 1; n <= 5; n++)
        {
            await host.Producer.EnqueueAsync(new TestJob(n));
        }

        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 6, "jobs 1-5 prefetched behind job 0");

        // Redis loses its data; another instance recreates the group, and runs and completes a new job, before this
        // host's next heartbeat.
        await db.ScriptEvaluateAsync(
            """
            redis.call('FLUSHALL')
            redis.call('XGROUP', 'CREATE', KEYS[1], 'workers', '0', 'MKSTREAM')
            local id = redis.call('XADD', KEYS[1], '*', 'p', '{"n":99}', 'a', '1', 't', '0')
            redis.call('XDEL', KEYS[1], id)
            return 1
            """,
            [stream]);

        // This host's next heartbeat looks at the six entries it holds (511: Redis lost them; 504 would say another
        // consumer took them), while jobs 1-5 still wait behind job 0.
        await Eventually.HoldsAsync(() => Task.FromResult(logs.Entries.Any(e => e.EventId.Id is 504 or 511)), "the heartbeat to look at the entries held here");
        gate0.SetResult();
        await log.WaitUntilAsync(() => Enumerable.Range(1, 5).All(n => log.CallsOf(n) == 1), "jobs 1-5, which Redis lost, to run", TimeSpan.FromSeconds(15));
    }

    /// <summary>
    /// Three instances hold 24 jobs (6 running, 18 prefetched) when Redis loses its data; right after, new jobs are
    /// enqueued and completed on the recreated stream by a fourth, so the others' heartbeats may come after completions
    /// there.
    /// Every held job must still run, exactly once (the running ones by their success, the others stored again), and no
    /// instance may take its held jobs for reclaimed elsewhere (504). Whether a completion beats a given heartbeat is
    /// a race: without the epoch this fails on most runs, not all.
    /// </summary>
    [Fact]
    public async Task RedisLosesItsData_ThreeInstancesAndCompletionsRightAfter_EveryHeldJobRunsOnce()
    {
        await using var own = await RedisServer.StartAsync();
        string prefix = DurableTestHost.NewPrefix();
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        int gated = 0;
        var log = new JobLog
        {
            // Only the six runs the three first instances start hold their threads: a held job stored again after the
            // loss may be fetched by the fourth instance before the jobs it adds, and must not block its threads too
            // (that made the test time out once in CI with nothing lost: runs 8, both new runs such jobs).
            Behavior = async (job, call, _) =>
            {
                if (job.N < 100 && call == 1 && Interlocked.Increment(ref gated) <= 6)
                {
                    await gate.Task;
                }
            },
        };
        var logs = new LogCapture();
        Action<WorkQueueOptions> engine = o =>
        {
            o.MinWorkers = 2;
            o.MaxWorkers = 2;
            o.MaxConcurrency = 2;
        };
        Action<DurableQueueOptions> durable = d =>
        {
            d.Prefetch = 8;

            // Long enough that no claim is reclaimed under a loaded test run: a reclaim is a legitimate second run.
            d.ClaimTimeout = TimeSpan.FromSeconds(10);
            d.HeartbeatInterval = TimeSpan.FromMilliseconds(300);
        };
        await using var a = await DurableTestHost.StartAsync(own, log, prefix, "a", engine, durable, logs);
        await using var b = await DurableTestHost.StartAsync(own, log, prefix, "b", engine, durable, logs);
        await using var c = await DurableTestHost.StartAsync(own, log, prefix, "c", engine, durable, logs);
        await using var admin = await DurableTestHost.ConnectAsync(own);
        var db = admin.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        for (int n = 0; n < 24; n++)
        {
            await a.Producer.EnqueueAsync(new TestJob(n));
        }

        await log.WaitUntilAsync(() => log.Runs.Count == 6, "two jobs to start on each instance");
        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 24, "all 24 jobs held");

        // A fourth instance, holding nothing, runs the jobs added after the loss while the others' threads are busy.
        await using var d = await DurableTestHost.StartAsync(own, log, prefix, "d", engine, durable, logs);
        await admin.GetServer(admin.GetEndPoints()[0]).FlushAllDatabasesAsync();
        for (int n = 100; n < 110; n++)
        {
            await d.Producer.EnqueueAsync(new TestJob(n));
        }

        // Some may wait in the others' prefetch behind the gate: one completion on the new stream is what matters.
        await log.WaitUntilAsync(() => log.Completed > 0, "a new job to complete", TimeSpan.FromSeconds(15));
        gate.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 34, "every held job to run", TimeSpan.FromSeconds(20));
        Assert.All(Enumerable.Range(0, 24), n => Assert.Equal(1, log.CallsOf(n)));
        Assert.DoesNotContain(logs.Entries, e => e.EventId.Id == 504);
    }

    /// <summary>
    /// Due retries are fetched when due: a consumer learns the next due time from its own fetches, so a retry it stores
    /// after its last fetch must move its next poll (and nudge the others), or the retry waits for the next PollInterval
    /// (up to a minute) instead of its backoff.
    /// </summary>
    [Fact]
    public async Task Retry_ConsumerWithALongPoll_RunsAtItsBackoffNotAtThePoll()
    {
        var fail = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var second = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog
        {
            Behavior = async (_, call, _) =>
            {
                if (call == 1)
                {
                    await fail.Task;
                    throw new InvalidOperationException("fails once");
                }

                second.TrySetResult();
            },
        };
        await using var host = await DurableTestHost.StartAsync(
            redis.Server,
            log,
            DurableTestHost.NewPrefix(),
            configure: o =>
            {
                o.Retry.MaxAttempts = 2;
                o.Retry.BaseDelay = TimeSpan.FromMilliseconds(200);
                o.Retry.UseJitter = false;
            },
            configureDurable: d => d.PollInterval = TimeSpan.FromSeconds(55));

        await host.Producer.EnqueueAsync(new TestJob(1));
        await log.WaitUntilAsync(() => log.CallsOf(1) == 1, "the first attempt to start");

        // The consumer has settled down to wait for its next poll: Redis has seen no fetch from it for a while.
        await using var admin = await DurableTestHost.ConnectAsync(redis.Server);
        string stream = host.Services.GetRequiredService<WorkQueue.AspNetCore.Durable.DurableQueueRegistry>().Queues.Single().Store.Keys.Stream.ToString();
        await Eventually.HoldsAsync(async () => (await admin.GetDatabase().StreamConsumerInfoAsync(stream, "workers")).All(c => c.IdleTimeInMilliseconds > 1_000), "the consumer idle for a second");
        fail.SetResult();
        await Wait.ForAsync(second.Task, "the retry, 200 ms after the failure, well before the 55-second poll");
    }

    [Fact]
    public async Task Stop_WhileAProducerWaitsForRoom_TellsItQueueStopped()
    {
        var log = new JobLog();
        var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o =>
        {
            o.Capacity = 1;
            o.FullMode = QueueFullMode.Wait;
        });
        host.Control.Pause();
        await host.Producer.EnqueueAsync(new TestJob(0));
        var waiting = host.Producer.EnqueueAsync(new TestJob(1)).AsTask();

        await host.Host.StopAsync(CancellationToken.None);

        var rejected = await Assert.ThrowsAsync<JobRejectedException>(() => waiting.WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Equal(RejectionReason.QueueStopped, rejected.Reason);
        host.Host.Dispose();
    }

    [Fact]
    public async Task RedisGone_EveryQueuedEnqueueFailsFast_WithStoreUnavailable()
    {
        var own = await RedisServer.StartAsync();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(own, log, DurableTestHost.NewPrefix());
        await host.Producer.EnqueueAsync(new TestJob(0));
        await own.DisposeAsync();

        var started = DateTime.UtcNow;
        var results = await Task.WhenAll(Enumerable.Range(1, 2_000).Select(async n =>
        {
            try
            {
                await host.Producer.EnqueueAsync(new TestJob(n));
                return (RejectionReason?)null;
            }
            catch (JobRejectedException ex)
            {
                return ex.Reason;
            }
            catch (EnqueueOutcomeUnknownException)
            {
                // A round sent as Redis went away: its answer never came, so its callers cannot be told "not stored".
                return RejectionReason.StoreUnavailable;
            }
        })).WaitAsync(TimeSpan.FromSeconds(30));

        Assert.All(results, r => Assert.Equal(RejectionReason.StoreUnavailable, r));
        Assert.True(DateTime.UtcNow - started < TimeSpan.FromSeconds(15), $"2,000 enqueues took {(DateTime.UtcNow - started).TotalSeconds:F1} s to be rejected.");
    }

    [Fact]
    public async Task WaitingForRoom_TheOldestWaiterGetsTheRoomFirst()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o =>
        {
            o.Capacity = 1;
            o.FullMode = QueueFullMode.Wait;
        });
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        host.Control.Pause();
        string first = await host.Producer.EnqueueAsync(new TestJob(0));
        var older = host.Producer.EnqueueAsync(new TestJob(1)).AsTask();
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(stream) == 1, "job 0 stored (a paused instance does not fetch it)");

        // Room for one appears, and a newer producer arrives at once.
        await db.StreamAcknowledgeAsync(stream, "workers", first);
        await db.StreamDeleteAsync(stream, [first]);
        var newer = host.Producer.EnqueueAsync(new TestJob(2)).AsTask();

        await older.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.False(newer.IsCompleted, "The newer enqueue took the room ahead of the older one.");
        host.Control.Resume();
        await newer.WaitAsync(TimeSpan.FromSeconds(30));
        await log.WaitUntilAsync(() => log.CallsOf(1) == 1 && log.CallsOf(2) == 1, "jobs 1 and 2");
    }

    private static int[] Snapshot(List<int> ran)
    {
        lock (ran)
        {
            return [.. ran];
        }
    }

    public sealed record StrictJob
    {
        public StrictJob(int n)
        {
            ArgumentOutOfRangeException.ThrowIfNegative(n);
            N = n;
        }

        public int N { get; }
    }

    /// <summary>A payload whose constructor waits on <see cref="Gate"/> for a negative number: a reader that blocks.</summary>
    public sealed record BlockingJob
    {
        public BlockingJob(int n)
        {
            if (n < 0)
            {
                Gate?.Wait(TimeSpan.FromMinutes(1));
            }

            N = n;
        }

        public static ManualResetEventSlim? Gate { get; set; }

        public int N { get; }
    }

    public sealed class BlockingJobHandler : IJobHandler<BlockingJob>
    {
        public ValueTask ExecuteAsync(BlockingJob payload, CancellationToken cancellationToken) => ValueTask.CompletedTask;
    }

    public sealed class StrictJobHandler(List<int> ran) : IJobHandler<StrictJob>
    {
        public ValueTask ExecuteAsync(StrictJob payload, CancellationToken cancellationToken)
        {
            lock (ran)
            {
                ran.Add(payload.N);
            }

            return ValueTask.CompletedTask;
        }
    }
}
