using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.Metrics.Testing;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// What KEDA would read to scale a worker deployment of a durable queue (docs/keda.md), in each state of the queue: the
/// commands its <c>redis-streams</c> scaler sends for each mode (<see cref="KedaRedisStreamsScaler"/>), and the durable
/// gauges its <c>prometheus</c> scaler would query, read here from a producer-only instance (the front end that still
/// runs when the workers are scaled to zero). Redis 7.0 or later (the fixture's), so the group's lag is known.
/// </summary>
public sealed class KedaScalerReadingsTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private static readonly Action<DurableQueueOptions> FrontEnd = d => d.Consume = false;

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Start_BeforeAnyEnqueue_TheConsumerGroupExistsAndEveryReadingIsZero(bool consume)
    {
        string prefix = DurableTestHost.NewPrefix();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        await using var host = await DurableTestHost.StartAsync(redis.Server, new JobLog(), prefix, configureDurable: d => d.Consume = consume);

        // As soon as the host has started: a scaler never meets a missing group (NOGROUP for XPENDING, XLEN for the lag).
        var group = Assert.Single(await db.StreamGroupInfoAsync(DurableTestHost.StreamKey(prefix)));
        Assert.Equal(("workers", (long?)0), (group.Name, group.Lag));
        var readings = await Scaler(db, prefix).ReadAsync();
        Assert.Equal(new KedaReadings(0, 0, 0), readings);
        Assert.False(KedaRedisStreamsScaler.IsActive(readings.Lag));
    }

    [Fact]
    public async Task Idle_AfterJobsRanAndTheStreamWasTrimmed_EveryReadingIsZeroAndTheLagKnown()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        await using var worker = await DurableTestHost.StartAsync(redis.Server, log, prefix, "worker");
        using var gauges = new DurableGauges(worker);
        for (int n = 0; n < 20; n++)
        {
            await worker.Producer.EnqueueAsync(new TestJob(n));
        }

        await log.WaitUntilAsync(() => log.Completed == 20, "the 20 jobs");

        // The trim (XTRIM MINID) removed the acknowledged entries without a tombstone: the lag is 0, not unknown (-1).
        await ReadsAsync(db, prefix, new KedaReadings(0, 0, 0), "an idle queue");
        Assert.Equal("0-0", await MaxDeletedEntryIdAsync(db, prefix));
        await gauges.ShowAsync(new GaugeReadings(StreamLength: 0, Pending: 0, Delayed: 0, Scheduled: 0, Consumers: 1), "an idle queue");
    }

    [Fact]
    public async Task Backlog_NoWorkerThenTooFew_LagCountsWhatWaitsAndPendingOnlyWhatWorkersHold()
    {
        string prefix = DurableTestHost.NewPrefix();
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (_, _, _) => new ValueTask(gate.Task) };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        await using var front = await DurableTestHost.StartAsync(redis.Server, log, prefix, "front", configureDurable: FrontEnd);
        using var gauges = new DurableGauges(front);
        for (int n = 0; n < 30; n++)
        {
            await front.Producer.EnqueueAsync(new TestJob(n));
        }

        // Workers scaled to zero: the backlog is lag (active: it wakes the deployment); nothing is pending (inactive:
        // pendingEntriesCount alone never scales from zero). The front end still exports the cluster-wide gauges.
        var zero = await ReadsAsync(db, prefix, new KedaReadings(0, 30, 30), "30 jobs and no worker");
        Assert.True(KedaRedisStreamsScaler.IsActive(zero.Lag) && KedaRedisStreamsScaler.IsActive(zero.StreamLength));
        Assert.False(KedaRedisStreamsScaler.IsActive(zero.PendingEntriesCount));
        await gauges.ShowAsync(new GaugeReadings(StreamLength: 30, Pending: 0, Delayed: 0, Scheduled: 0, Consumers: 0), "30 jobs and no worker");

        // One worker, one thread, a prefetch of 4, every job blocked: it holds 5 (1 running + 4 prefetched), pending
        // says 5 whatever the backlog, and lag says the 25 that wait for more workers.
        await using var worker = await DurableTestHost.StartAsync(
            redis.Server,
            log,
            prefix,
            "worker",
            o =>
            {
                o.MinWorkers = 1;
                o.MaxWorkers = 1;
                o.MaxConcurrency = 1;
            },
            d => d.Prefetch = 4);
        await ReadsAsync(db, prefix, new KedaReadings(5, 30, 25), "a worker holding 5 of 30 jobs");
        await gauges.ShowAsync(new GaugeReadings(StreamLength: 30, Pending: 5, Delayed: 0, Scheduled: 0, Consumers: 1), "a worker holding 5 of 30 jobs");

        gate.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 30, "the 30 jobs");
        await ReadsAsync(db, prefix, new KedaReadings(0, 0, 0), "the backlog done");
    }

    [Fact]
    public async Task JobsRunning_NothingWaiting_LagIsZeroPendingCountsThemStreamLengthAlsoCountsCompletedOnes()
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 0 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        await using var worker = await DurableTestHost.StartAsync(redis.Server, log, prefix, "worker", o =>
        {
            o.MinWorkers = 2;
            o.MaxWorkers = 2;
        });
        using var gauges = new DurableGauges(worker);
        await worker.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 0 to start");
        for (int n = 1; n <= 10; n++)
        {
            await worker.Producer.EnqueueAsync(new TestJob(n));
        }

        await log.WaitUntilAsync(() => log.Completed == 10, "jobs 1-10 beside the running job 0");

        // Lag 0: a lag-only trigger is inactive while job 0 runs (with minReplicaCount 0, the deployment goes to zero
        // after the cooldown, and the stop hands job 0 back). Pending 1 keeps it active. XLEN counts jobs 1-10 too:
        // acknowledged, they wait behind job 0 for the trim.
        var running = await ReadsAsync(db, prefix, new KedaReadings(1, 11, 0), "job 0 running, jobs 1-10 completed behind it");
        Assert.False(KedaRedisStreamsScaler.IsActive(running.Lag));
        Assert.True(KedaRedisStreamsScaler.IsActive(running.PendingEntriesCount));
        await gauges.ShowAsync(new GaugeReadings(StreamLength: 1, Pending: 1, Delayed: 0, Scheduled: 0, Consumers: 1), "job 0 running");

        release.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 11, "job 0");
        await ReadsAsync(db, prefix, new KedaReadings(0, 0, 0), "every job done and trimmed");
    }

    [Fact]
    public async Task RetryAndScheduledJob_WaitOutsideTheStream_NoStreamReadingSeesThem()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog { Behavior = static (job, _, _) => job.N < 0 ? throw new InvalidOperationException("fails") : ValueTask.CompletedTask };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        await using var worker = await DurableTestHost.StartAsync(redis.Server, log, prefix, "worker", o =>
        {
            o.Retry.MaxAttempts = 2;
            o.Retry.BaseDelay = TimeSpan.FromHours(1);
            o.Retry.MaxDelay = TimeSpan.FromHours(1);
            o.Retry.UseJitter = false;
        });
        using var gauges = new DurableGauges(worker);
        await worker.Producer.EnqueueAsync(new TestJob(-1));
        await worker.Producer.ScheduleAsync(new TestJob(1), TimeSpan.FromHours(1));
        await Eventually.HoldsAsync(async () => await db.SortedSetLengthAsync(DurableTestHost.DelayedKey(prefix)) == 2, "the failed job's retry and the scheduled job in the delayed set");

        // Both wait in the delayed set until a consumer's fetch moves them to the stream once due: every stream reading
        // is 0 and every trigger inactive, so with minReplicaCount 0 nothing runs them (see DueJob_NoWorkerRunning...).
        var readings = await ReadsAsync(db, prefix, new KedaReadings(0, 0, 0), "a retry and a scheduled job waiting");
        Assert.False(KedaRedisStreamsScaler.IsActive(readings.Lag) || KedaRedisStreamsScaler.IsActive(readings.PendingEntriesCount));
        await gauges.ShowAsync(new GaugeReadings(StreamLength: 0, Pending: 0, Delayed: 1, Scheduled: 1, Consumers: 1), "a retry and a scheduled job waiting");
    }

    [Fact]
    public async Task DueJob_NoWorkerRunning_StaysOutOfTheStreamUntilAWorkerFetches()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        await using var front = await DurableTestHost.StartAsync(redis.Server, log, prefix, "front", configureDurable: FrontEnd);
        using var gauges = new DurableGauges(front);
        await front.Producer.ScheduleAsync(new TestJob(1), TimeSpan.FromMilliseconds(200));
        var member = Assert.Single(await db.SortedSetRangeByRankWithScoresAsync(DurableTestHost.DelayedKey(prefix)));
        await Eventually.HoldsAsync(async () => await RedisTimeMsAsync(db) > member.Score, "the scheduled job to fall due by Redis's clock");

        // A round of the front end after the due time stores job 2 and moves nothing: only a consumer's fetch promotes.
        // So KEDA sees job 2 (lag 1) and not job 1, which would wait forever were it alone.
        await front.Producer.EnqueueAsync(new TestJob(2));
        Assert.Equal(new KedaReadings(0, 1, 1), await Scaler(db, prefix).ReadAsync());
        Assert.Equal(1, await db.SortedSetLengthAsync(DurableTestHost.DelayedKey(prefix)));

        // The front end's gauges still count it: a Prometheus trigger on the scheduled (and delayed) gauges can wake a worker.
        await gauges.ShowAsync(new GaugeReadings(StreamLength: 1, Pending: 0, Delayed: 0, Scheduled: 1, Consumers: 0), "job 2 queued and job 1 due, unpromoted");

        await using var worker = await DurableTestHost.StartAsync(redis.Server, log, prefix, "worker");
        await log.WaitUntilAsync(() => log.Completed == 2, "the worker to run job 2 and the due job 1");
        Assert.Equal(0, await db.SortedSetLengthAsync(DurableTestHost.DelayedKey(prefix)));
        await ReadsAsync(db, prefix, new KedaReadings(0, 0, 0), "both jobs done");
        await gauges.ShowAsync(new GaugeReadings(StreamLength: 0, Pending: 0, Delayed: 0, Scheduled: 0, Consumers: 1), "both jobs done");
    }

    [Fact]
    public async Task DeadConsumersJobs_ArePendingNotLag_UntilASurvivorReclaimsThem()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        await using var front = await DurableTestHost.StartAsync(redis.Server, log, prefix, "front", configureDurable: FrontEnd);
        using var gauges = new DurableGauges(front);
        for (int n = 0; n < 5; n++)
        {
            await front.Producer.EnqueueAsync(new TestJob(n));
        }

        // What a SIGKILL leaves: a consumer took the entries and never settles them.
        Assert.Equal(5, (await db.StreamReadGroupAsync(DurableTestHost.StreamKey(prefix), "workers", "ghost", ">", count: 10)).Length);

        // Lag 0: a lag-only trigger lets the last worker's crash scale the deployment to zero with these jobs in it;
        // pendingEntriesCount sees them (active), and so does the stream.length gauge.
        var dead = await ReadsAsync(db, prefix, new KedaReadings(5, 5, 0), "5 jobs pending on a dead consumer");
        Assert.False(KedaRedisStreamsScaler.IsActive(dead.Lag));
        Assert.True(KedaRedisStreamsScaler.IsActive(dead.PendingEntriesCount));
        await gauges.ShowAsync(new GaugeReadings(StreamLength: 5, Pending: 5, Delayed: 0, Scheduled: 0, Consumers: 1), "5 jobs pending on a dead consumer");

        await using var survivor = await DurableTestHost.StartAsync(redis.Server, log, prefix, "survivor", configureDurable: DurableClaims.Fast);
        await log.WaitUntilAsync(() => log.Completed == 5, "the survivor to reclaim and run the 5 jobs");
        await ReadsAsync(db, prefix, new KedaReadings(0, 0, 0), "the reclaimed jobs done");
    }

    [Fact]
    public async Task GracefulStop_HandsBackWhatTheWorkerHeld_AndTheLagCountsItAgain()
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 0 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        var stopping = await DurableTestHost.StartAsync(redis.Server, log, prefix, "stopping", o =>
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

        await ReadsAsync(db, prefix, new KedaReadings(5, 5, 0), "jobs 1-4 prefetched behind job 0");

        // A scale-down stops the pod: what it had not started goes back at once as new entries, lag again (their old
        // entries, acknowledged, wait for the trim behind job 0, which runs on until it ends).
        var stop = stopping.Host.StopAsync(CancellationToken.None);
        var handedBack = await ReadsAsync(db, prefix, new KedaReadings(1, 9, 4), "jobs 1-4 handed back");
        Assert.True(KedaRedisStreamsScaler.IsActive(handedBack.Lag));
        release.SetResult();
        await stop;
        stopping.Host.Dispose();
        await ReadsAsync(db, prefix, new KedaReadings(0, 4, 4), "jobs 1-4 waiting for another worker");
    }

    [Fact]
    public async Task Lag_AfterTheStoresCancelOfAQueuedJob_StaysKnown_AfterAnXdelByHand_IsNilAndReadsMinusOne()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        await using var front = await DurableTestHost.StartAsync(redis.Server, log, prefix, "front", configureDurable: FrontEnd);
        using var gauges = new DurableGauges(front);
        var ids = new List<string>();
        for (int n = 0; n < 4; n++)
        {
            ids.Add(await front.Producer.EnqueueAsync(new TestJob(n)));
        }

        // The store's cancel deletes the entry and sets the stream's counters back (cancel.lua): no tombstone.
        Assert.Equal(JobCancelOutcome.Canceled, (await front.Producer.CancelAsync(ids[1])).Outcome);
        Assert.Equal(new KedaReadings(0, 3, 3), await Scaler(db, prefix).ReadAsync());

        // An XDEL by hand (or by a WorkQueue before issue 21's fix) leaves a tombstone ahead of the group: Redis 7.0 answers
        // a nil lag, which KEDA reads as -1 (0 before KEDA 2.18): inactive, while two jobs wait. The gauge falls back to XLEN.
        await db.StreamDeleteAsync(DurableTestHost.StreamKey(prefix), [ids[2]]);
        Assert.True((await db.StreamGroupInfoAsync(DurableTestHost.StreamKey(prefix)))[0].Lag is null, "Redis still tells the lag after an XDEL ahead of the group.");
        var unknown = await Scaler(db, prefix).ReadAsync();
        Assert.Equal(new KedaReadings(0, 2, -1), unknown);
        Assert.False(KedaRedisStreamsScaler.IsActive(unknown.Lag));
        await gauges.ShowAsync(new GaugeReadings(StreamLength: 2, Pending: 0, Delayed: 0, Scheduled: 0, Consumers: 0), "two jobs, the lag unknown");

        // Known again once a worker has read past the tombstone and the trim emptied the stream.
        await using var worker = await DurableTestHost.StartAsync(redis.Server, log, prefix, "worker");
        await log.WaitUntilAsync(() => log.Completed == 2, "the two jobs left");
        await ReadsAsync(db, prefix, new KedaReadings(0, 0, 0), "the stream emptied, the lag known again");
    }

    [Fact]
    public async Task RedisLostTheQueue_FrontEndEnqueuesAgain_LagFallsBackToTheStreamLengthUntilAWorkerMakesTheGroup()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        await using var front = await DurableTestHost.StartAsync(redis.Server, log, prefix, "front", configureDurable: FrontEnd);
        await db.KeyDeleteAsync([DurableTestHost.StreamKey(prefix), $"{prefix}:{{{DurableTestHost.Queue}}}:epoch"]);

        // The front end's enqueue makes the stream again, without the group (only a consumer makes it again):
        // pendingEntriesCount fails (NOGROUP; KEDA then keeps the replicas as they are, or its fallback), the lag
        // mode falls back to XLEN (active), so a worker starts, makes the group and reads the stream from its start.
        await front.Producer.EnqueueAsync(new TestJob(1));
        await front.Producer.EnqueueAsync(new TestJob(2));
        var scaler = Scaler(db, prefix);
        var nogroup = await Assert.ThrowsAsync<RedisServerException>(scaler.PendingEntriesCountAsync);
        Assert.StartsWith("NOGROUP", nogroup.Message, StringComparison.Ordinal);
        Assert.Equal(2, await scaler.LagAsync());

        await using var worker = await DurableTestHost.StartAsync(redis.Server, log, prefix, "worker");
        await log.WaitUntilAsync(() => log.Completed == 2, "the worker to run both jobs");
        await ReadsAsync(db, prefix, new KedaReadings(0, 0, 0), "both jobs done");
    }

    private static KedaRedisStreamsScaler Scaler(IDatabase db, string prefix) => new(db, DurableTestHost.StreamKey(prefix));

    /// <summary>Reads until the scaler's three figures are <paramref name="expected"/> (jobs settle and the trim runs in the background).</summary>
    private static async Task<KedaReadings> ReadsAsync(IDatabase db, string prefix, KedaReadings expected, string what)
    {
        var scaler = Scaler(db, prefix);
        return await Eventually.ValueAsync(async () => await scaler.ReadAsync(), r => r == expected, $"KEDA to read {expected} with {what}");
    }

    private static async Task<string> MaxDeletedEntryIdAsync(IDatabase db, string prefix)
    {
        var info = (RedisResult[])(await db.ExecuteAsync("XINFO", "STREAM", (RedisKey)DurableTestHost.StreamKey(prefix)))!;
        for (int i = 0; i + 1 < info.Length; i += 2)
        {
            if ((string?)info[i] == "max-deleted-entry-id")
            {
                return (string)info[i + 1]!;
            }
        }

        throw new InvalidOperationException("XINFO STREAM has no max-deleted-entry-id (Redis before 7.0).");
    }

    private static async Task<double> RedisTimeMsAsync(IDatabase db)
    {
        var time = (RedisResult[])(await db.ExecuteAsync("TIME"))!;
        return ((long)time[0] * 1000) + ((long)time[1] / 1000);
    }

    /// <summary>The durable gauges a Prometheus trigger would query, as one host exports them.</summary>
    private readonly record struct GaugeReadings(long? StreamLength, long? Pending, long? Delayed, long? Scheduled, long? Consumers);

    /// <summary>Collects a host's durable gauges (read from Redis, cached for up to a second).</summary>
    private sealed class DurableGauges : IDisposable
    {
        private readonly MetricCollector<long> _length;
        private readonly MetricCollector<long> _pending;
        private readonly MetricCollector<long> _delayed;
        private readonly MetricCollector<long> _scheduled;
        private readonly MetricCollector<long> _consumers;

        public DurableGauges(DurableTestHost host)
        {
            var meters = host.Services.GetRequiredService<IMeterFactory>();
            _length = new(meters, WorkQueueTelemetry.MeterName, "workqueue.durable.stream.length");
            _pending = new(meters, WorkQueueTelemetry.MeterName, "workqueue.durable.pending");
            _delayed = new(meters, WorkQueueTelemetry.MeterName, "workqueue.durable.delayed");
            _scheduled = new(meters, WorkQueueTelemetry.MeterName, "workqueue.durable.scheduled");
            _consumers = new(meters, WorkQueueTelemetry.MeterName, "workqueue.durable.consumers");
        }

        public async Task ShowAsync(GaugeReadings expected, string what) =>
            await Eventually.ValueAsync(() => ValueTask.FromResult(Read()), r => r == expected, $"the gauges to show {expected} with {what}");

        public void Dispose()
        {
            _length.Dispose();
            _pending.Dispose();
            _delayed.Dispose();
            _scheduled.Dispose();
            _consumers.Dispose();
        }

        private GaugeReadings Read() => new(Observed(_length), Observed(_pending), Observed(_delayed), Observed(_scheduled), Observed(_consumers));

        private static long? Observed(MetricCollector<long> collector)
        {
            collector.RecordObservableInstruments();
            return collector.LastMeasurement?.Value;
        }
    }
}
