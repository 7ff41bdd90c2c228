using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Completed entries are trimmed from the stream up to the oldest entry still needed (the oldest pending one, or the
/// first not yet delivered) instead of being deleted one by one: what stays behind a pending entry, what the queue's
/// depth and capacity count meanwhile, and that a pending entry is never trimmed away from its reclaim.
/// </summary>
public sealed class DurableTrimTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    /// <summary>One worker for the job that stays running, one for the others.</summary>
    private static readonly Action<WorkQueueOptions> TwoWorkers = o =>
    {
        o.MinWorkers = 2;
        o.MaxWorkers = 2;
    };

    [Fact]
    public async Task CompletedEntriesBehindARunningOne_StayUntilItCompletes_AndAreNotCountedAsUnfinished()
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 0 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: TwoWorkers);
        await host.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 0 to start");
        for (int n = 1; n <= 4; n++)
        {
            await host.Producer.EnqueueAsync(new TestJob(n));
        }

        await log.WaitUntilAsync(() => log.Completed == 4, "jobs 1-4 to complete");
        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 1, "jobs 1-4 acknowledged");

        // Jobs 1-4 are settled but newer than job 0, which still runs: they wait in the stream for the trim...
        Assert.Equal(5, await db.StreamLengthAsync(stream));

        // ... and the queue's depth counts only job 0 (in figures read after the acknowledgements).
        var acknowledged = DateTimeOffset.UtcNow;
        await Eventually.HoldsAsync(
            () => Task.FromResult(host.Control.GetSnapshot().Durable is { ReadAt: { } read } && read > acknowledged),
            "figures read after the acknowledgements");
        Assert.True(
            host.Control.GetSnapshot().Durable is { StreamLength: 1, Pending: 1, Lag: 0 },
            $"Expected 1 unfinished job, found {host.Control.GetSnapshot().Durable}.");

        release.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 5, "job 0 to complete");
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(stream) == 0, "the stream trimmed empty once job 0 is acknowledged");
    }

    [Fact]
    public async Task EnqueueAsync_CompletedEntriesWaitingForTheTrim_DoNotTakeTheQueuesRoom()
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 0 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o =>
        {
            TwoWorkers(o);
            o.Capacity = 3;
            o.FullMode = QueueFullMode.Reject;
        });
        await host.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 0 to start");
        await host.Producer.EnqueueAsync(new TestJob(1));
        await host.Producer.EnqueueAsync(new TestJob(2));
        await log.WaitUntilAsync(() => log.Completed == 2, "jobs 1 and 2 to complete");
        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 1, "jobs 1 and 2 acknowledged");
        Assert.Equal(3, await db.StreamLengthAsync(stream));

        // One job unfinished of 3: two more fit, although the stream holds 3 entries.
        await host.Producer.EnqueueAsync(new TestJob(3));
        await host.Producer.EnqueueAsync(new TestJob(4));
        await log.WaitUntilAsync(() => log.Completed == 4, "jobs 3 and 4 to complete");

        release.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 5, "job 0 to complete");
    }

    [Fact]
    public async Task EntryPendingOnADeadConsumer_IsNotTrimmedWhileNewerEntriesComplete_AndIsReclaimed()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await db.StreamCreateConsumerGroupAsync(stream, "workers", StreamPosition.Beginning, createStream: true);
        await db.StreamAddAsync(stream, [new("p", "{\"n\":-1}"), new("a", "1"), new("t", "0")]);

        // The crash: a consumer took the oldest job and is never heard of again.
        var ghost = Assert.Single(await db.StreamReadGroupAsync(stream, "workers", "ghost", ">", count: 1));

        // A claim timeout no run of this test reaches: the newer jobs complete (and trim) while the ghost's entry is pending.
        await using (var first = await DurableTestHost.StartAsync(redis.Server, log, prefix, "first", configureDurable: DurableClaims.Never))
        {
            for (int n = 0; n < 20; n++)
            {
                await first.Producer.EnqueueAsync(new TestJob(n));
            }

            await log.WaitUntilAsync(() => log.Completed == 20, "the 20 newer jobs to complete");
            await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 1, "the newer jobs acknowledged");
            Assert.Single(await db.StreamRangeAsync(stream, ghost.Id, ghost.Id));
            Assert.Equal(21, await db.StreamLengthAsync(stream));
            await first.Host.StopAsync();
        }

        await using var survivor = await DurableTestHost.StartAsync(redis.Server, log, prefix, "survivor", configureDurable: DurableClaims.Live);
        await log.WaitUntilAsync(() => log.Completed == 21, "the dead consumer's job to be reclaimed and run");
        Assert.Equal(1, log.CallsOf(-1));
        Assert.Equal("survivor", log.Runs.Single(r => r.Job.N == -1).Instance);
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(stream) == 0, "the stream trimmed empty");
    }

    [Fact]
    public async Task ConsumersDieWithEntriesPending_WhileOthersCompleteNewerOnes_EveryJobRuns()
    {
        const int Jobs = 200;
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await using var a = await DurableTestHost.StartAsync(redis.Server, log, prefix, "a", configureDurable: DurableClaims.Live);
        await using var b = await DurableTestHost.StartAsync(redis.Server, log, prefix, "b", configureDurable: DurableClaims.Live);

        // Pending entries scattered through the stream: while both hosts are paused, a batch is stored and a consumer
        // that then dies takes the first few of it; the hosts run the rest and everything after it meanwhile.
        // A reclaim of a live consumer's entry on a loaded machine is a legitimate second run: nothing lost is the claim.
        var ghosts = new List<RedisValue>();
        for (int round = 0; round < 4; round++)
        {
            a.Control.Pause();
            b.Control.Pause();
            await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == ghosts.Count, "the hosts to settle what they hold");
            for (int n = round * 50; n < (round + 1) * 50; n++)
            {
                await (n % 2 == 0 ? a : b).Producer.EnqueueAsync(new TestJob(n));
            }

            ghosts.AddRange((await db.StreamReadGroupAsync(stream, "workers", $"ghost-{round}", ">", count: 3)).Select(e => e.Id));
            a.Control.Resume();
            b.Control.Resume();
        }

        await log.WaitUntilAsync(() => Enumerable.Range(0, Jobs).All(n => log.CallsOf(n) >= 1), "every job to run", TimeSpan.FromSeconds(60));
        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 0, "nothing pending");
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(stream) == 0, "the stream trimmed empty");
        Assert.Equal(12, ghosts.Count);
    }

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

    [Fact]
    public async Task StatusSearchAndCancel_CompletedEntryWaitingForTheTrim_IsNotQueuedNorCancelled()
    {
        // A completed entry behind a running one stays in the stream, acknowledged: in the stream and pending for no
        // consumer no longer means queued. Without a record of the success (no retention here; or one pruned by
        // MaxFinishedJobs) a cancel by id took it for a queued job: ended it cancelled and freed its idempotency key, so
        // the same key enqueued again ran the job a second time; its status read queued, and the search listed it so.
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 0 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o =>
        {
            TwoWorkers(o);
            o.FinishedJobRetention = TimeSpan.Zero;
            o.IdempotencyKeyRetention = TimeSpan.FromMinutes(5);
        });
        string running = await host.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 0 to start");
        var first = await host.Producer.EnqueueAsync(new TestJob(1), new JobOptions { IdempotencyKey = "order-1" });
        await log.WaitUntilAsync(() => log.Completed == 1, "job 1 to complete");
        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 1, "job 1 acknowledged");
        Assert.Single(await db.StreamRangeAsync(stream, first.JobId, first.JobId));

        var status = await host.Producer.GetJobAsync(first.JobId);
        var page = await host.Producer.FindJobsAsync(new JobQuery { States = [JobState.Queued, JobState.Running] });
        var cancel = await host.Producer.CancelAsync(first.JobId);
        var again = await host.Producer.EnqueueAsync(new TestJob(1), new JobOptions { IdempotencyKey = "order-1" });
        release.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 2, "job 0 to complete");

        Assert.Equal(((JobState?)null, JobCancelOutcome.NotFound, false), (status?.State, cancel.Outcome, again.Created));
        Assert.Equal([(running, JobState.Running)], page.Jobs.Select(j => (j.Id, j.State)).ToArray());
        Assert.Equal(1, log.CallsOf(1));
    }

    [Fact]
    public async Task EnqueueAsync_LagUnknownAfterACancel_CompletedEntriesWaitingForTheTrim_DoNotTakeTheQueuesRoom()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await db.StreamCreateConsumerGroupAsync(stream, "workers", StreamPosition.Beginning, createStream: true);
        var ids = new List<string>();
        for (int n = 1; n <= 8; n++)
        {
            ids.Add((string)(await db.StreamAddAsync(stream, [new("p", "{\"n\":" + n + "}"), new("a", "1"), new("t", "0")]))!);
        }

        // A consumer runs job 1 (pending: it holds the trim back) and completed jobs 2-4, which wait for the trim.
        Assert.Equal(4, (await db.StreamReadGroupAsync(stream, "workers", "ghost", ">", count: 4)).Length);
        await db.StreamAcknowledgeAsync(stream, "workers", [ids[1], ids[2], ids[3]]);
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o =>
        {
            o.Capacity = 5;
            o.FullMode = QueueFullMode.Reject;
        }, configureDurable: d => d.Consume = false);

        // Job 6, queued, is cancelled (deleted, the stream's counters set back): unfinished are job 1 and jobs 5, 7, 8,
        // so one more job fits, and only one.
        Assert.Equal(JobCancelOutcome.Canceled, (await host.Producer.CancelAsync(ids[5])).Outcome);
        Assert.Equal(3, await LagAsync(db, stream));
        await host.Producer.EnqueueAsync(new TestJob(9));
        await Assert.ThrowsAsync<JobRejectedException>(async () => await host.Producer.EnqueueAsync(new TestJob(10)));
        Assert.Equal(4, await LagAsync(db, stream));
    }

    // An entry that leaves the stream for somewhere else (a retry, a dead letter, a cancel, a hand-back) while entries
    // wait undelivered behind it is acknowledged and left to the trim, as a completed one is: an XDEL at the group's
    // position made Redis 7.0 report no lag, and the count fell back to XLEN, completed entries waiting for the trim
    // included. Each test: a consumer that never reports back holds job -1 (holding the trim back), jobs -2 and -3 are
    // completed and wait for the trim; the host, paused once job 1 runs, stores job 2 without fetching it.

    // Every job fails, once the gate opens: the scene is arranged first (job 1 running, job 2 stored behind it).
    private static JobLog FailingOnceOpened(Task gate) => new()
    {
        Behavior = async (job, _, _) =>
        {
            await gate;
            throw new InvalidOperationException("job " + job.N + " fails");
        },
    };

    [Fact]
    public async Task EnqueueAsync_AfterARetryAheadOfQueuedEntries_RoomAndDepthStayExact()
    {
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = FailingOnceOpened(gate.Task);
        await using var scene = await LagSceneAsync(log, capacity: 4, o =>
        {
            o.Retry.MaxAttempts = 2;
            o.Retry.BaseDelay = TimeSpan.FromHours(1);
            o.Retry.MaxDelay = TimeSpan.FromHours(1);
        });
        gate.SetResult();
        await Eventually.HoldsAsync(async () => await scene.Db.SortedSetLengthAsync(DurableTestHost.DelayedKey(scene.Prefix)) == 1, "job 1 to wait for its retry");

        // Unfinished: job -1 (pending), job 2 (queued) and job 1 (delayed): one more of 4 fits, and only one.
        await scene.AssertRoomAsync(expectedPending: 1, expectedLag: 1);
    }

    [Fact]
    public async Task EnqueueAsync_AfterADeadLetterAheadOfQueuedEntries_RoomAndDepthStayExact()
    {
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = FailingOnceOpened(gate.Task);
        await using var scene = await LagSceneAsync(log, capacity: 3, o => o.Retry.MaxAttempts = 1);
        gate.SetResult();
        await Eventually.HoldsAsync(async () => await scene.Db.StreamLengthAsync(DurableTestHost.DeadKey(scene.Prefix)) == 1, "job 1 dead-lettered");

        // Unfinished: job -1 (pending) and job 2 (queued): one more of 3 fits, and only one.
        await scene.AssertRoomAsync(expectedPending: 1, expectedLag: 1);
    }

    [Fact]
    public async Task EnqueueAsync_AfterACancelOfARunningJobAheadOfQueuedEntries_RoomAndDepthStayExact()
    {
        var log = new JobLog { Behavior = static async (_, _, cancellationToken) => await Task.Delay(Timeout.Infinite, cancellationToken) };
        await using var scene = await LagSceneAsync(log, capacity: 3);
        Assert.Equal(JobCancelOutcome.CancelRequested, (await scene.Host.Producer.CancelAsync(scene.Running)).Outcome);
        await Eventually.HoldsAsync(async () => (await scene.Db.StreamPendingAsync(scene.Stream, "workers")).PendingMessageCount == 1, "job 1 cancelled");

        // Unfinished: job -1 (pending) and job 2 (queued): one more of 3 fits, and only one.
        await scene.AssertRoomAsync(expectedPending: 1, expectedLag: 1);
    }

    [Fact]
    public async Task EnqueueAsync_AfterAHandBackAheadOfQueuedEntries_RoomAndDepthStayExact()
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 0 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await ArrangeCompletedBehindAHeldEntryAsync(db, stream);
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o =>
        {
            o.MinWorkers = 1;
            o.MaxWorkers = 1;
            o.MaxConcurrency = 1;
            o.Capacity = 5;
            o.FullMode = QueueFullMode.Reject;
        }, configureDurable: DurableClaims.Never);
        await host.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 0 to start");
        await host.Producer.EnqueueAsync(new TestJob(1));
        await host.Producer.EnqueueAsync(new TestJob(2));
        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 4, "jobs 1 and 2 prefetched behind job 0");

        // Jobs 1 and 2 handed back as new entries after their old ones (acknowledged, waiting for the trim).
        host.Control.Pause();
        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 2, "jobs 1 and 2 handed back");

        // Unfinished: jobs -1 and 0 (pending), jobs 1 and 2 (queued): one more of 5 fits, and only one.
        Assert.Equal(2, await LagAsync(db, stream));
        await host.Producer.EnqueueAsync(new TestJob(3));
        await Assert.ThrowsAsync<JobRejectedException>(async () => await host.Producer.EnqueueAsync(new TestJob(4)));
        Assert.Equal(3, await LagAsync(db, stream));
        release.SetResult();
    }

    [Fact]
    public async Task Reclaim_PoisonAheadOfQueuedEntries_IsAcknowledgedAndTheLagStaysKnown()
    {
        // The reclaim script run as a consumer's reclaim runs it, on job 1: delivered once to a consumer that died, and
        // the last delivered entry, with job 2 queued behind it. Dead-lettered as poison, it waits for the trim.
        string prefix = DurableTestHost.NewPrefix();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await ArrangeCompletedBehindAHeldEntryAsync(db, stream);
        var poison = await db.StreamAddAsync(stream, [new("p", "{\"n\":1}"), new("a", "1"), new("t", "0")]);
        Assert.Single(await db.StreamReadGroupAsync(stream, "workers", "dead", ">", count: 1));
        await db.StreamAddAsync(stream, [new("p", "{\"n\":2}"), new("a", "1"), new("t", "0")]);
        Assert.Equal(1, await LagAsync(db, stream));

        var reply = (RedisResult[])(await db.ScriptEvaluateAsync(
            DurableScripts.Reclaim,
            [stream, DurableTestHost.DeadKey(prefix), $"{prefix}:{{{DurableTestHost.Queue}}}:epoch"],
            ["workers", "reclaimer", 0, poison, 1, 1, 0]))!;

        Assert.Empty((RedisResult[])reply[1]!);
        Assert.Equal(1, await db.StreamLengthAsync(DurableTestHost.DeadKey(prefix)));
        Assert.Equal(1, (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount);
        Assert.Equal(1, await LagAsync(db, stream));
        Assert.Single(await db.StreamRangeAsync(stream, poison, poison));
    }

    [Fact]
    public async Task StatusSearchAndCancel_RetriedJobsOldEntryWaitingForTheTrim_ResolveThroughItsPointer()
    {
        // The retried entry stays in the stream, acknowledged, behind job -1: neither queued nor running, and the job's
        // id (its first entry's) leads to the delayed set, where it waits for its retry.
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog { Behavior = static (job, _, _) => throw new InvalidOperationException("job " + job.N + " fails") };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await ArrangeCompletedBehindAHeldEntryAsync(db, stream);
        string held = (string)(await db.StreamRangeAsync(stream, count: 1))[0].Id!;
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o =>
        {
            o.Retry.MaxAttempts = 2;
            o.Retry.BaseDelay = TimeSpan.FromHours(1);
            o.Retry.MaxDelay = TimeSpan.FromHours(1);
        }, configureDurable: DurableClaims.Never);
        string retried = await host.Producer.EnqueueAsync(new TestJob(1));
        await Eventually.HoldsAsync(async () => await db.SortedSetLengthAsync(DurableTestHost.DelayedKey(prefix)) == 1, "job 1 to wait for its retry");
        Assert.Single(await db.StreamRangeAsync(stream, retried, retried));

        var status = await host.Producer.GetJobAsync(retried);
        var page = await host.Producer.FindJobsAsync(new JobQuery { States = [JobState.Queued, JobState.Running, JobState.Retrying] });
        var cancel = await host.Producer.CancelAsync(retried);

        Assert.Equal(JobState.Retrying, status?.State);
        Assert.Equal([(held, JobState.Running), (retried, JobState.Retrying)], page.Jobs.Select(j => (j.Id, j.State)).ToArray());
        Assert.Equal(JobCancelOutcome.Canceled, cancel.Outcome);
        Assert.Equal(0, await db.SortedSetLengthAsync(DurableTestHost.DelayedKey(prefix)));
        Assert.Equal(JobState.Canceled, (await host.Producer.GetJobAsync(retried))?.State);
    }

    [Fact]
    public async Task EnqueueAsync_KeyOfAJobDeadLetteredBehindAHeldEntry_IsFree()
    {
        // The dead-lettered entry stays in the stream, acknowledged, until the trim: its key is freed all the same.
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog { Behavior = static (job, call, _) => job.N == 1 && call == 1 ? throw new InvalidOperationException("fails") : ValueTask.CompletedTask };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await ArrangeCompletedBehindAHeldEntryAsync(db, stream);
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o => o.Retry.MaxAttempts = 1, configureDurable: DurableClaims.Never);
        var first = await host.Producer.EnqueueAsync(new TestJob(1), new JobOptions { IdempotencyKey = "order-1" });
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(DurableTestHost.DeadKey(prefix)) == 1, "job 1 dead-lettered");
        Assert.Single(await db.StreamRangeAsync(stream, first.JobId, first.JobId));

        var again = await host.Producer.EnqueueAsync(new TestJob(1), new JobOptions { IdempotencyKey = "order-1" });
        await log.WaitUntilAsync(() => log.Completed == 1, "job 1 to run again and complete");
        Assert.True(again.Created);
        Assert.NotEqual(first.JobId, again.JobId);
    }

    [Fact]
    public async Task DeadLetters_WithNoJobCompleting_AreTrimmedFromTheStream()
    {
        // Every job fails: no round acknowledges a completion, so the dead-letter script's own trim removes the entries.
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog { Behavior = static (_, _, _) => throw new InvalidOperationException("fails") };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o => o.Retry.MaxAttempts = 1);
        for (int n = 1; n <= 10; n++)
        {
            await host.Producer.EnqueueAsync(new TestJob(n));
        }

        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(DurableTestHost.DeadKey(prefix)) == 10, "the 10 jobs dead-lettered");
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(stream) == 0, "the stream trimmed empty");
        Assert.Equal(0, await LagAsync(db, stream));
    }

    /// <summary>
    /// Stores jobs -1, -2 and -3: a consumer that never reports back holds job -1 (it holds the trim back), jobs -2 and
    /// -3 are completed and wait for the trim.
    /// </summary>
    private static async Task ArrangeCompletedBehindAHeldEntryAsync(IDatabase db, string stream)
    {
        await db.StreamCreateConsumerGroupAsync(stream, "workers", StreamPosition.Beginning, createStream: true);
        var ids = new List<RedisValue>();
        for (int n = -1; n >= -3; n--)
        {
            ids.Add(await db.StreamAddAsync(stream, [new("p", "{\"n\":" + n + "}"), new("a", "1"), new("t", "0")]));
        }

        Assert.Equal(3, (await db.StreamReadGroupAsync(stream, "workers", "ghost", ">", count: 3)).Length);
        Assert.Equal(2, await db.StreamAcknowledgeAsync(stream, "workers", [ids[1], ids[2]]));
    }

    /// <summary>The group's lag as Redis reports it (null: it cannot tell).</summary>
    private static async Task<long?> LagAsync(IDatabase db, string stream) => Assert.Single(await db.StreamGroupInfoAsync(stream)).Lag;

    /// <summary>
    /// Arranges completed entries behind a held one (see <see cref="ArrangeCompletedBehindAHeldEntryAsync"/>), starts a
    /// host with the given capacity (rejecting when full), runs job 1 on it, pauses it and stores job 2 (not fetched).
    /// </summary>
    private async Task<LagScene> LagSceneAsync(JobLog log, int capacity, Action<WorkQueueOptions>? configure = null)
    {
        string prefix = DurableTestHost.NewPrefix();
        var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await ArrangeCompletedBehindAHeldEntryAsync(db, stream);
        var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o =>
        {
            o.Capacity = capacity;
            o.FullMode = QueueFullMode.Reject;
            configure?.Invoke(o);
        }, configureDurable: DurableClaims.Never);
        string running = await host.Producer.EnqueueAsync(new TestJob(1));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 1 to start");
        host.Control.Pause();
        await host.Producer.EnqueueAsync(new TestJob(2));
        Assert.Equal(1, await LagAsync(db, stream));
        return new LagScene(prefix, stream, db, redisClient, host, running);
    }

    private sealed record LagScene(string Prefix, string Stream, IDatabase Db, ConnectionMultiplexer Client, DurableTestHost Host, string Running) : IAsyncDisposable
    {
        /// <summary>Asserts Redis reports the group's lag (so the depth is pending + lag), and that one more job fits, and only one.</summary>
        public async Task AssertRoomAsync(long expectedPending, long expectedLag)
        {
            Assert.Equal(expectedPending, (await Db.StreamPendingAsync(Stream, "workers")).PendingMessageCount);
            Assert.Equal(expectedLag, await LagAsync(Db, Stream));
            await Host.Producer.EnqueueAsync(new TestJob(3));
            await Assert.ThrowsAsync<JobRejectedException>(async () => await Host.Producer.EnqueueAsync(new TestJob(4)));
            Assert.Equal(expectedLag + 1, await LagAsync(Db, Stream));
        }

        public async ValueTask DisposeAsync()
        {
            await Host.DisposeAsync();
            await Client.DisposeAsync();
        }
    }
}
