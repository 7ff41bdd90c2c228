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
    private static readonly Action<DurableQueueOptions> FastClaims = d =>
    {
        d.ClaimTimeout = TimeSpan.FromSeconds(2);
        d.HeartbeatInterval = TimeSpan.FromMilliseconds(300);
    };

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
        await using (var first = await DurableTestHost.StartAsync(redis.Server, log, prefix, "first", configureDurable: d => d.ClaimTimeout = TimeSpan.FromMinutes(5)))
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

        await using var survivor = await DurableTestHost.StartAsync(redis.Server, log, prefix, "survivor", configureDurable: FastClaims);
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
        await using var a = await DurableTestHost.StartAsync(redis.Server, log, prefix, "a", configureDurable: FastClaims);
        await using var b = await DurableTestHost.StartAsync(redis.Server, log, prefix, "b", configureDurable: FastClaims);

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

    [Fact(Skip = "Known defect, not fixed (s3-storereview): after a tombstone at or past the group's position (a cancel of a queued job, a hand-back, a retry of the last delivered entry) Redis 7.0 reports no lag while entries stay undelivered, and unfinished() falls back to XLEN, which counts completed entries waiting for the trim: rejected as full with 4 of 5 unfinished.")]
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

        // Job 6, queued, is cancelled (XDEL): unfinished are job 1 and jobs 5, 7, 8, so one more job fits.
        Assert.Equal(JobCancelOutcome.Canceled, (await host.Producer.CancelAsync(ids[5])).Outcome);
        await host.Producer.EnqueueAsync(new TestJob(9));
    }
}
