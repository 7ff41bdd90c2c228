using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.Metrics.Testing;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Idempotency keys on a durable queue, on a real redis-server: a second enqueue with a key adds no job while the job
/// that holds it is queued, scheduled, running or waiting for a retry (on any instance), the key follows the job and is
/// released when it ends, and a key whose job is gone never blocks.
/// </summary>
public sealed class DurableIdempotencyTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task EnqueueAsync_KeyHeldByAQueuedJob_AddsNoJobAndReturnsTheHolder_ThenReleasesItOnSuccess()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix);
        var meters = host.Services.GetRequiredService<IMeterFactory>();
        using var deduplicated = new MetricCollector<long>(meters, WorkQueueTelemetry.MeterName, "workqueue.job.deduplicated");
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        var keys = Store(host).Keys;
        host.Control.Pause();

        var first = await host.Producer.EnqueueAsync(new TestJob(1), Key("order-1"));
        var second = await host.Producer.EnqueueAsync(new TestJob(2), Key("order-1"));
        var other = await host.Producer.EnqueueAsync(new TestJob(3), Key("order-2"));

        Assert.True(first.Created);
        Assert.Equal(new EnqueueResult(first.JobId, Created: false), second);
        Assert.True(other.Created);
        Assert.Equal(2, await db.StreamLengthAsync(keys.Stream));
        Assert.Equal($"{first.JobId}|{first.JobId}", (string?)await db.StringGetAsync(keys.IdempotencyKey("order-1")));
        Assert.Equal(1, deduplicated.GetMeasurementSnapshot().Sum(m => m.Value));
        Assert.Equal(DurableTestHost.Queue, deduplicated.LastMeasurement!.Tags["workqueue.queue"]);

        host.Control.Resume();
        await log.WaitUntilAsync(() => log.Completed == 2, "both jobs");
        await Eventually.HoldsAsync(async () => !await db.KeyExistsAsync(keys.IdempotencyKey("order-1")) && !await db.KeyExistsAsync(keys.IdempotencyKey("order-2")), "both keys released after success");
        Assert.Equal((1, 0, 1), (log.CallsOf(1), log.CallsOf(2), log.CallsOf(3)));

        var again = await host.Producer.EnqueueAsync(new TestJob(4), Key("order-1"));
        Assert.True(again.Created);
        Assert.NotEqual(first.JobId, again.JobId);
        await log.WaitUntilAsync(() => log.Completed == 3, "the job enqueued again once the key was free");
    }

    [Fact]
    public async Task EnqueueAsync_FullQueue_StillAnswersAKeyThatIsHeld()
    {
        await using var host = await DurableTestHost.StartAsync(redis.Server, new JobLog(), DurableTestHost.NewPrefix(), configure: o =>
        {
            o.Capacity = 1;
            o.FullMode = QueueFullMode.Reject;
        }, configureDurable: d => d.Consume = false);

        var first = await host.Producer.EnqueueAsync(new TestJob(1), Key("only"));

        // Most likely one round: the first finds no room, the second is answered all the same.
        var unkeyed = host.Producer.EnqueueAsync(new TestJob(2), new JobOptions()).AsTask();
        var repeat = host.Producer.EnqueueAsync(new TestJob(3), Key("only")).AsTask();
        Assert.Equal(RejectionReason.QueueFull, (await Assert.ThrowsAsync<JobRejectedException>(() => unkeyed)).Reason);
        Assert.Equal(new EnqueueResult(first.JobId, Created: false), await repeat);

        var other = await Assert.ThrowsAsync<JobRejectedException>(async () => await host.Producer.EnqueueAsync(new TestJob(4), Key("other")));
        Assert.Equal(RejectionReason.QueueFull, other.Reason);
    }

    [Fact]
    public async Task EnqueueAsync_KeyHeldByARunningJob_AddsNoJob()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 1 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix());

        var first = await host.Producer.EnqueueAsync(new TestJob(1), Key("k"));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "the job to start");
        var second = await host.Producer.EnqueueAsync(new TestJob(2), Key("k"));

        Assert.Equal(new EnqueueResult(first.JobId, Created: false), second);
        release.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 1, "the job to complete");
        await Eventually.HoldsAsync(async () => (await host.Producer.EnqueueAsync(new TestJob(3), Key("k"))).Created, "a new job once the key is released");
        await log.WaitUntilAsync(() => log.Completed == 2, "the new job");
        Assert.Equal(0, log.CallsOf(2));
    }

    [Fact]
    public async Task EnqueueAsync_KeyHeldByAScheduledJob_AddsNoJob_UntilItsScheduleIsCancelled()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix);
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        var keys = Store(host).Keys;

        var scheduled = await host.Producer.EnqueueAsync(new TestJob(1), Key("report", delay: TimeSpan.FromHours(1)));
        var now = await host.Producer.EnqueueAsync(new TestJob(2), Key("report"));
        var at = await host.Producer.EnqueueAsync(new TestJob(3), Key("report", runAt: DateTimeOffset.UtcNow.AddHours(2)));

        Assert.True(scheduled.Created);
        Assert.StartsWith("s", scheduled.JobId, StringComparison.Ordinal);
        Assert.Equal(new EnqueueResult(scheduled.JobId, Created: false), now);
        Assert.Equal(new EnqueueResult(scheduled.JobId, Created: false), at);
        Assert.Equal(1, await db.SortedSetLengthAsync(keys.Delayed));
        Assert.StartsWith("{\"n\":1", (await Store(host).Jobs.ListScheduledAsync(10)).Single().Payload, StringComparison.Ordinal);

        Assert.True(await host.Producer.CancelScheduledAsync(scheduled.JobId));
        Assert.False(await db.KeyExistsAsync(keys.IdempotencyKey("report")));
        var after = await host.Producer.EnqueueAsync(new TestJob(4), Key("report"));
        Assert.True(after.Created);
        await log.WaitUntilAsync(() => log.Completed == 1, "the job enqueued after the cancel");
        Assert.Equal(1, log.CallsOf(4));
    }

    [Fact]
    public async Task ScheduledJobWithAKey_ComesDueAndRuns_KeepsItsKeyUntilItSucceeds()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 1 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix());

        var scheduled = await host.Producer.EnqueueAsync(new TestJob(1), Key("nightly", delay: TimeSpan.FromMilliseconds(300)));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "the scheduled job to come due and start");

        // Moved from the delayed set to the stream, under its own job id.
        var whileRunning = await host.Producer.EnqueueAsync(new TestJob(2), Key("nightly"));
        Assert.Equal(new EnqueueResult(scheduled.JobId, Created: false), whileRunning);

        release.SetResult();
        await Eventually.HoldsAsync(async () => (await host.Producer.EnqueueAsync(new TestJob(3), Key("nightly"))).Created, "a new job once the scheduled one succeeded");
        await log.WaitUntilAsync(() => log.Completed == 2, "the new job");
        Assert.Equal(0, log.CallsOf(2));
    }

    [Fact]
    public async Task JobWaitingForARetry_KeepsItsKey()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog { Behavior = static (_, call, _) => call == 1 ? throw new InvalidOperationException("first attempt fails") : ValueTask.CompletedTask };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o =>
        {
            o.Retry.MaxAttempts = 2;
            o.Retry.BaseDelay = TimeSpan.FromSeconds(3);
            o.Retry.UseJitter = false;
        });
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        var keys = Store(host).Keys;

        var first = await host.Producer.EnqueueAsync(new TestJob(1), Key("retry"));
        await Eventually.HoldsAsync(async () => await db.SortedSetLengthAsync(keys.Delayed) == 1, "the failed job waiting for its retry");
        string? held = (string?)await db.StringGetAsync(keys.IdempotencyKey("retry"));
        Assert.StartsWith($"{first.JobId}|z", held, StringComparison.Ordinal);

        var duringRetryWait = await host.Producer.EnqueueAsync(new TestJob(2), Key("retry"));
        Assert.Equal(new EnqueueResult(first.JobId, Created: false), duringRetryWait);

        await log.WaitUntilAsync(() => log.Completed == 1, "the retry to succeed");
        await Eventually.HoldsAsync(async () => !await db.KeyExistsAsync(keys.IdempotencyKey("retry")), "the key released after the retry succeeded");
        Assert.Equal((2, 0), (log.CallsOf(1), log.CallsOf(2)));
    }

    [Fact]
    public async Task SucceededJob_KeepsItsKeyForTheRetention_ThenReleasesIt()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o => o.IdempotencyKeyRetention = TimeSpan.FromSeconds(2));
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        var key = Store(host).Keys.IdempotencyKey("paid");

        var first = await host.Producer.EnqueueAsync(new TestJob(1), Key("paid"));
        await log.WaitUntilAsync(() => log.Completed == 1, "the job");
        await Eventually.HoldsAsync(async () => (string?)await db.StringGetAsync(key) == $"{first.JobId}|done", "the key kept as done");
        var ttl = await db.KeyTimeToLiveAsync(key);
        Assert.True(ttl is { } t && t > TimeSpan.Zero && t <= TimeSpan.FromSeconds(2), $"expiry {ttl}");

        var repeat = await host.Producer.EnqueueAsync(new TestJob(2), Key("paid"));
        Assert.Equal(new EnqueueResult(first.JobId, Created: false), repeat);

        // Redis expires it on its own clock.
        await Eventually.HoldsAsync(async () => !await db.KeyExistsAsync(key), "the retention to pass");
        Assert.True((await host.Producer.EnqueueAsync(new TestJob(3), Key("paid"))).Created);
        await log.WaitUntilAsync(() => log.Completed == 2, "the job after the retention");
        Assert.Equal(0, log.CallsOf(2));
    }

    [Fact]
    public async Task DeadLetteredJob_ReleasesItsKey_AndARequeueTakesItBackWhenFree()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog { Behavior = static (job, _, _) => job.N == 1 ? throw new InvalidOperationException("always fails") : ValueTask.CompletedTask };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o => o.Retry.MaxAttempts = 1);
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        var store = Store(host);

        var first = await host.Producer.EnqueueAsync(new TestJob(1), Key("doomed"));
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(store.Keys.Dead) == 1, "the job dead-lettered");
        Assert.False(await db.KeyExistsAsync(store.Keys.IdempotencyKey("doomed")));
        var dead = (await db.StreamRangeAsync(store.Keys.Dead)).Single();
        Assert.Equal("doomed", (string?)dead["k"]);

        // Free again: the work can be submitted again.
        host.Control.Pause();
        var again = await host.Producer.EnqueueAsync(new TestJob(2), Key("doomed"));
        Assert.True(again.Created);

        // A requeue while another job holds the key runs without it; once the key is free, a requeue takes it back.
        Assert.NotNull((await store.Jobs.RequeueDeadLetterAsync(dead.Id!)).NewId);
        Assert.Equal($"{again.JobId}|{again.JobId}", (string?)await db.StringGetAsync(store.Keys.IdempotencyKey("doomed")));
        host.Control.Resume();
        await log.WaitUntilAsync(() => log.Completed == 1 && log.CallsOf(1) == 2, "job 2, and the requeued job failing again");
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(store.Keys.Dead) == 1 && !await db.KeyExistsAsync(store.Keys.IdempotencyKey("doomed")), "dead-lettered again, key free");

        host.Control.Pause();
        var deadAgain = (await db.StreamRangeAsync(store.Keys.Dead)).Single();
        Assert.NotNull((await store.Jobs.RequeueDeadLetterAsync(deadAgain.Id!)).NewId);
        var refused = await host.Producer.EnqueueAsync(new TestJob(3), Key("doomed"));
        Assert.Equal(new EnqueueResult(first.JobId, Created: false), refused);
    }

    [Fact]
    public async Task JobOfADeadConsumer_ReclaimedBySurvivor_KeepsItsKey()
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 1 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        EnqueueResult first;
        await using (var producer = await DurableTestHost.StartAsync(redis.Server, log, prefix, "producer", configureDurable: d => d.Consume = false))
        {
            first = await producer.Producer.EnqueueAsync(new TestJob(1), Key("claimed"));
        }

        // The crash: a consumer takes the entry and is never heard of again.
        Assert.Single(await db.StreamReadGroupAsync(stream, "workers", "ghost", ">", count: 10));

        await using var survivor = await DurableTestHost.StartAsync(redis.Server, log, prefix, "survivor", configureDurable: DurableClaims.Fast);
        var whilePending = await survivor.Producer.EnqueueAsync(new TestJob(2), Key("claimed"));
        Assert.Equal(new EnqueueResult(first.JobId, Created: false), whilePending);

        await log.WaitUntilAsync(() => log.Runs.Count == 1, "the survivor to reclaim and start the job");
        Assert.Equal("survivor", log.Runs.Single().Instance);
        var whileReclaimed = await survivor.Producer.EnqueueAsync(new TestJob(3), Key("claimed"));
        Assert.Equal(new EnqueueResult(first.JobId, Created: false), whileReclaimed);

        release.SetResult();
        await Eventually.HoldsAsync(async () => !await db.KeyExistsAsync(Store(survivor).Keys.IdempotencyKey("claimed")), "the key released once the reclaimed job succeeded");
        Assert.Equal((1, 0, 0), (log.CallsOf(1), log.CallsOf(2), log.CallsOf(3)));
    }

    [Fact]
    public async Task PoisonJob_DeadLetteredByAReclaim_ReleasesItsKey()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await using var producer = await DurableTestHost.StartAsync(redis.Server, log, prefix, "producer", configureDurable: d => d.Consume = false);
        var poison = await producer.Producer.EnqueueAsync(new TestJob(1), Key("poison"));

        // Two consumers took it and died (a job that crashes its process every time).
        var first = await db.StreamReadGroupAsync(stream, "workers", "ghost-1", ">", count: 1);
        await db.StreamClaimAsync(stream, "workers", "ghost-2", 0, [first[0].Id]);
        Assert.Equal(new EnqueueResult(poison.JobId, Created: false), await producer.Producer.EnqueueAsync(new TestJob(2), Key("poison")));

        await using var survivor = await DurableTestHost.StartAsync(redis.Server, log, prefix, "survivor", configureDurable: d =>
        {
            DurableClaims.Fast(d);
            d.MaxDeliveries = 2;
        });

        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(DurableTestHost.DeadKey(prefix)) == 1, "the poison entry dead-lettered");
        var dead = (await db.StreamRangeAsync(DurableTestHost.DeadKey(prefix))).Single();
        Assert.Equal(("poison", "poison"), ((string?)dead["r"], (string?)dead["k"]));
        Assert.False(await db.KeyExistsAsync(Store(survivor).Keys.IdempotencyKey("poison")));
        Assert.True((await producer.Producer.EnqueueAsync(new TestJob(3), Key("poison"))).Created);
        Assert.DoesNotContain(log.Runs, r => r.Job.N < 3);
    }

    [Fact]
    public async Task JobHandedBackAtAStop_TakesItsKeyWithItToItsNewEntry()
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 0 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        var first = await DurableTestHost.StartAsync(redis.Server, log, prefix, "first", configure: o =>
        {
            o.MinWorkers = 1;
            o.MaxWorkers = 1;
            o.MaxConcurrency = 1;
        });
        var keys = Store(first).Keys;

        // Job 0 holds the only slot; job 1 (keyed) waits in this instance's prefetch and is handed back at the stop.
        await first.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 0 to start");
        var keyed = await first.Producer.EnqueueAsync(new TestJob(1), Key("handed-back"));
        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(keys.Stream, "workers")).PendingMessageCount == 2, "job 1 fetched into the prefetch");
        var stop = first.Host.StopAsync(CancellationToken.None);
        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(keys.Stream, "workers")).PendingMessageCount == 1, "job 1 handed back");
        release.SetResult();
        await stop;
        first.Host.Dispose();

        string? held = (string?)await db.StringGetAsync(keys.IdempotencyKey("handed-back"));
        Assert.StartsWith($"{keyed.JobId}|", held, StringComparison.Ordinal);
        Assert.NotEqual($"{keyed.JobId}|{keyed.JobId}", held);
        Assert.Equal(1, await db.StreamLengthAsync(keys.Stream));
        await using var second = await DurableTestHost.StartAsync(redis.Server, log, prefix, "second", configureDurable: d => d.Consume = false);
        Assert.Equal(new EnqueueResult(keyed.JobId, Created: false), await second.Producer.EnqueueAsync(new TestJob(2), Key("handed-back")));
    }

    [Fact]
    public async Task ManyProducersOnThreeHosts_RaceForTheSameKeys_EachKeyStoresOneJobAndEveryCallerLearnsItsId()
    {
        const int Keys = 40;
        const int ProducersPerHost = 8;
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        var hosts = new List<DurableTestHost>();
        try
        {
            foreach (string name in new[] { "a", "b", "c" })
            {
                hosts.Add(await DurableTestHost.StartAsync(redis.Server, log, prefix, name, configureDurable: d => d.Consume = false));
            }

            for (int round = 0; round < 3; round++)
            {
                var results = new ConcurrentBag<(string Key, EnqueueResult Result)>();
                var producers = hosts.SelectMany(host => Enumerable.Range(0, ProducersPerHost).Select(p => Task.Run(async () =>
                {
                    var order = Enumerable.Range(0, Keys).OrderBy(_ => Random.Shared.Next()).ToArray();
                    foreach (int k in order)
                    {
                        string key = $"r{round}-k{k}";
                        results.Add((key, await host.Producer.EnqueueAsync(new TestJob(k), Key(key))));
                    }
                }))).ToArray();
                await Wait.ForAsync(Task.WhenAll(producers), "every producer");

                Assert.Equal(Keys * ProducersPerHost * hosts.Count, results.Count);
                foreach (var byKey in results.GroupBy(r => r.Key))
                {
                    Assert.Single(byKey, r => r.Result.Created);
                    Assert.Single(byKey.Select(r => r.Result.JobId).Distinct());
                }
            }

            await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
            Assert.Equal(3 * Keys, await redisClient.GetDatabase().StreamLengthAsync(DurableTestHost.StreamKey(prefix)));
        }
        finally
        {
            foreach (var host in hosts)
            {
                await host.DisposeAsync();
            }
        }
    }

    [Fact]
    public async Task ProducersAndConsumersOnThreeHosts_HammeringFewKeys_NeverRunTwoJobsOfOneKeyAtOnce()
    {
        const int Keys = 6;
        const int EnqueuesPerProducer = 150;
        string prefix = DurableTestHost.NewPrefix();
        var running = new int[Keys];
        int overlaps = 0;
        var log = new JobLog
        {
            Behavior = async (job, _, ct) =>
            {
                if (Interlocked.Increment(ref running[job.N]) > 1)
                {
                    Interlocked.Increment(ref overlaps);
                }

                await Task.Delay(2, ct);
                Interlocked.Decrement(ref running[job.N]);
            },
        };
        var hosts = new List<DurableTestHost>();
        try
        {
            foreach (string name in new[] { "a", "b", "c" })
            {
                hosts.Add(await DurableTestHost.StartAsync(redis.Server, log, prefix, name));
            }

            // A key is released only once its job succeeded and was acknowledged, so a new job of that key can only be
            // stored after the last one ended: two runs of one key never overlap (no kills here, so no reclaims).
            var created = new ConcurrentBag<string>();
            int refused = 0;
            var producers = hosts.SelectMany(host => Enumerable.Range(0, 4).Select(_ => Task.Run(async () =>
            {
                for (int i = 0; i < EnqueuesPerProducer; i++)
                {
                    int k = Random.Shared.Next(Keys);
                    var result = await host.Producer.EnqueueAsync(new TestJob(k), Key($"hot-{k}"));
                    if (result.Created)
                    {
                        created.Add(result.JobId);
                    }
                    else
                    {
                        Interlocked.Increment(ref refused);
                    }
                }
            }))).ToArray();
            await Wait.ForAsync(Task.WhenAll(producers), "every producer");

            Assert.Equal(created.Count, created.Distinct().Count());
            await log.WaitUntilAsync(() => log.Completed == created.Count, $"the {created.Count} jobs stored", TimeSpan.FromSeconds(60));
            Assert.True(refused > 0 && created.Count > Keys, $"created {created.Count}, refused {refused}: the test should both refuse and re-add keys");
            Assert.Equal(0, Volatile.Read(ref overlaps));
            Assert.Equal(created.Count, log.Runs.Count);
        }
        finally
        {
            foreach (var host in hosts)
            {
                await host.DisposeAsync();
            }
        }
    }

    [Fact]
    public async Task StaleKey_WhoseJobWasDeletedByHand_DoesNotBlock()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configureDurable: d => d.Consume = false);
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        var keys = Store(host).Keys;

        var queued = await host.Producer.EnqueueAsync(new TestJob(1), Key("lost"));
        await db.StreamDeleteAsync(keys.Stream, [queued.JobId]);
        var afterDelete = await host.Producer.EnqueueAsync(new TestJob(2), Key("lost"));
        Assert.True(afterDelete.Created);
        Assert.NotEqual(queued.JobId, afterDelete.JobId);
        Assert.Equal($"{afterDelete.JobId}|{afterDelete.JobId}", (string?)await db.StringGetAsync(keys.IdempotencyKey("lost")));

        var scheduled = await host.Producer.EnqueueAsync(new TestJob(3), Key("lost-scheduled", delay: TimeSpan.FromHours(1)));
        await db.SortedSetRemoveRangeByRankAsync(keys.Delayed, 0, -1);
        await db.KeyDeleteAsync(keys.Scheduled);
        var afterRemove = await host.Producer.EnqueueAsync(new TestJob(4), Key("lost-scheduled"));
        Assert.True(afterRemove.Created);
        Assert.NotEqual(scheduled.JobId, afterRemove.JobId);
    }

    [Fact]
    public async Task KeysThatDifferOnlyInALoneSurrogate_AreNeverTakenForOneAnother()
    {
        // Keys are compared ordinally (JobOptions.IdempotencyKey): "order-\uFFFD" and the two keys with a lone surrogate
        // differ. A lone surrogate may be refused as invalid (ArgumentException) or kept apart, but not merged: sent as
        // UTF-8 it becomes U+FFFD, and in Redis all three name one key.
        await using var host = await DurableTestHost.StartAsync(redis.Server, new JobLog(), DurableTestHost.NewPrefix(), configureDurable: d => d.Consume = false);

        var replacement = await host.Producer.EnqueueAsync(new TestJob(1), Key("order-\uFFFD"));
        Assert.True(replacement.Created);
        foreach (string key in new[] { "order-\uD800", "order-\uDC00" })
        {
            EnqueueResult result;
            try
            {
                result = await host.Producer.EnqueueAsync(new TestJob(2), Key(key));
            }
            catch (ArgumentException error) when (error.ParamName == "options")
            {
                continue;
            }

            Assert.True(result.Created, $"a key with a lone surrogate ({(int)key[^1]:X4}) was answered as held by {result.JobId}, the job of 'order-\\uFFFD' ({replacement.JobId})");
        }
    }

    [Theory]
    [InlineData("", 1)]
    [InlineData("k", JobOptions.MaxKeyLength + 1)]
    [InlineData("line\nbreak", 1)]
    public async Task EnqueueAsync_InvalidKey_ThrowsArgumentExceptionNamingOptions(string part, int repeat)
    {
        await using var host = await DurableTestHost.StartAsync(redis.Server, new JobLog(), DurableTestHost.NewPrefix(), configureDurable: d => d.Consume = false);
        var options = new JobOptions { IdempotencyKey = string.Concat(Enumerable.Repeat(part, repeat)) };

        var error = await Assert.ThrowsAsync<ArgumentException>(async () => await host.Producer.EnqueueAsync(new TestJob(1), options));

        Assert.Equal("options", error.ParamName);
        Assert.Contains("IdempotencyKey", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task EnqueueAsync_BadOptions_Throw()
    {
        await using var host = await DurableTestHost.StartAsync(redis.Server, new JobLog(), DurableTestHost.NewPrefix(), configureDurable: d => d.Consume = false);

        await Assert.ThrowsAsync<ArgumentNullException>("options", async () => await host.Producer.EnqueueAsync(new TestJob(1), null!));
        await Assert.ThrowsAsync<ArgumentException>("options", async () => await host.Producer.EnqueueAsync(new TestJob(1), new JobOptions { Delay = TimeSpan.FromSeconds(1), RunAt = DateTimeOffset.UtcNow }));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>("options", async () => await host.Producer.EnqueueAsync(new TestJob(1), new JobOptions { Delay = TimeSpan.FromDays(40_000) }));

        // The longest key is taken.
        Assert.True((await host.Producer.EnqueueAsync(new TestJob(1), new JobOptions { IdempotencyKey = new string('k', JobOptions.MaxKeyLength) })).Created);
    }

    [Fact]
    public async Task EnqueueAsync_WithoutAKey_StoresEveryJob()
    {
        await using var host = await DurableTestHost.StartAsync(redis.Server, new JobLog(), DurableTestHost.NewPrefix(), configureDurable: d => d.Consume = false);

        var a = await host.Producer.EnqueueAsync(new TestJob(1), new JobOptions());
        var b = await host.Producer.EnqueueAsync(new TestJob(1), new JobOptions());

        Assert.True(a.Created && b.Created);
        Assert.NotEqual(a.JobId, b.JobId);
    }

    private static JobOptions Key(string key, TimeSpan? delay = null, DateTimeOffset? runAt = null) =>
        new() { IdempotencyKey = key, Delay = delay, RunAt = runAt };

    private static RedisStreamStore Store(DurableTestHost host) =>
        host.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single().Store;
}
