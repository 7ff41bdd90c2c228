using System.Collections.Concurrent;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Internal;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Durable recurring jobs whose state is shared through Redis (issue 19's last items): a runtime Remove or schedule
/// change on one instance holds on every instance and across restarts, a deploy's new schedule in code wins, an
/// instance whose clock runs ahead does not run occurrences early, and an occurrence claimed elsewhere is reported so in
/// a full queue. Several hosts share one real redis-server; a second job, <c>fence</c>, ticking every second on the
/// same queue, tells the tests how far the schedule has gone. All failed before their fixes.
/// </summary>
public sealed class DurableRecurringSharedStateTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const string Queue = "ticks";
    private const string EverySecond = "* * * * * *";

    [Fact]
    public async Task Remove_OnOneInstance_StopsItOnEveryInstance_AndARestartKeepsItRemoved()
    {
        var log = new RunLog();
        string prefix = DurableTestHost.NewPrefix();
        var hosts = new List<DurableTestHost>();
        try
        {
            foreach (string name in new[] { "a", "b", "c" })
            {
                hosts.Add(await StartAsync(log, prefix, name, EverySecond));
            }

            await log.WaitForAsync("nightly", DateTimeOffset.UtcNow, "a first occurrence");
            Assert.True(Jobs(hosts[0]).Remove("nightly"));
            await WaitForScheduleAsync(prefix, "|x|", "the tombstone stored in Redis");
            var removedAt = DateTimeOffset.UtcNow;

            // The others learn it at their next offer (refused) and drop the job.
            await Wait.UntilAsync(() => Jobs(hosts[1]).Find("nightly") is null && Jobs(hosts[2]).Find("nightly") is null, "b and c adopted the removal");
            await log.WaitForAsync("fence", removedAt.AddSeconds(3), "three more seconds");
            Assert.DoesNotContain(log.Runs, r => r.Job == "nightly" && r.ScheduledFor >= removedAt.AddSeconds(1));

            // b restarts with the job in code: the removal holds (same schedule as the one removed).
            await hosts[1].DisposeAsync();
            hosts[1] = await StartAsync(log, prefix, "b2", EverySecond);
            var restartedAt = DateTimeOffset.UtcNow;
            await Wait.UntilAsync(() => Jobs(hosts[1]).Find("nightly") is null, "the restarted b adopted the removal");
            await log.WaitForAsync("fence", restartedAt.AddSeconds(3), "three seconds after the restart");
            Assert.DoesNotContain(log.Runs, r => r.Job == "nightly" && r.ScheduledFor >= removedAt.AddSeconds(1));

            // Added again at runtime: it runs again (here, on the instance that added it).
            Jobs(hosts[2]).AddOrUpdate<RunHandler>("nightly", EverySecond, o => o.Queue = Queue);
            var addedAt = DateTimeOffset.UtcNow;
            await log.WaitForAsync("nightly", addedAt.AddSeconds(1), "an occurrence after the job was added again");
        }
        finally
        {
            await StopAllAsync(hosts);
        }
    }

    [Fact]
    public async Task AddOrUpdate_NewScheduleOnOneInstance_OthersStopTheOldSchedule_AndARestartKeepsIt()
    {
        var log = new RunLog();
        string prefix = DurableTestHost.NewPrefix();
        var hosts = new List<DurableTestHost>();
        try
        {
            hosts.Add(await StartAsync(log, prefix, "a", EverySecond));
            hosts.Add(await StartAsync(log, prefix, "b", EverySecond));
            await log.WaitForAsync("nightly", DateTimeOffset.UtcNow, "a first occurrence");

            // Every even second: b still holds every second in code; before, it ran the odd ones.
            Jobs(hosts[0]).AddOrUpdate<RunHandler>("nightly", "*/2 * * * * *", o => o.Queue = Queue);
            await WaitForScheduleAsync(prefix, "|r|*/2 * * * * * (UTC)|", "the new schedule stored in Redis");
            var changedAt = DateTimeOffset.UtcNow;
            await log.WaitForAsync("fence", changedAt.AddSeconds(4), "four more seconds");
            AssertOnlyEvenSecondsSince(log, changedAt.AddSeconds(1));
            Assert.Contains(log.Runs, r => r.Job == "nightly" && r.ScheduledFor >= changedAt.AddSeconds(1));

            // b's latest run shows why (between an occurrence's firing and its answer it shows Enqueued: waited for).
            await Wait.UntilAsync(
                () => Jobs(hosts[1]).Find("nightly")!.LastRun is { Outcome: RecurringRunOutcome.Skipped, Error: { } error } && error.Contains("schedule", StringComparison.Ordinal),
                "b showing its occurrence skipped for the other schedule");

            // b restarts with the old schedule in code: the runtime change holds.
            await hosts[1].DisposeAsync();
            hosts[1] = await StartAsync(log, prefix, "b2", EverySecond);
            var restartedAt = DateTimeOffset.UtcNow;
            await log.WaitForAsync("fence", restartedAt.AddSeconds(4), "four seconds after the restart");
            AssertOnlyEvenSecondsSince(log, changedAt.AddSeconds(1));
        }
        finally
        {
            await StopAllAsync(hosts);
        }
    }

    [Fact]
    public async Task Deploy_NewScheduleInCode_WinsOverTheOldOne_AndReRegistersARemovedJob()
    {
        var log = new RunLog();
        string prefix = DurableTestHost.NewPrefix();
        var hosts = new List<DurableTestHost>();
        try
        {
            hosts.Add(await StartAsync(log, prefix, "old", EverySecond));
            await log.WaitForAsync("nightly", DateTimeOffset.UtcNow, "a first occurrence");

            // A rolling deploy: a new instance with every even second in code; the old one stops its schedule.
            hosts.Add(await StartAsync(log, prefix, "new", "*/2 * * * * *"));
            await WaitForScheduleAsync(prefix, "|c|*/2 * * * * * (UTC)|", "the new schedule registered in Redis");
            var deployedAt = DateTimeOffset.UtcNow;
            await log.WaitForAsync("fence", deployedAt.AddSeconds(4), "four more seconds");
            AssertOnlyEvenSecondsSince(log, deployedAt.AddSeconds(1));
            Assert.Contains(log.Runs, r => r.Job == "nightly" && r.ScheduledFor >= deployedAt.AddSeconds(1));

            // Removed at runtime, then a deploy with yet another schedule in code registers it again.
            Assert.True(Jobs(hosts[1]).Remove("nightly"));
            await Wait.UntilAsync(() => Jobs(hosts[0]).Find("nightly") is null, "the old instance adopted the removal");
            hosts.Add(await StartAsync(log, prefix, "newer", "*/3 * * * * *"));
            var redeployedAt = DateTimeOffset.UtcNow;
            await log.WaitForAsync("nightly", redeployedAt.AddSeconds(1), "an occurrence of the redeployed schedule");
            Assert.NotNull(Jobs(hosts[2]).Find("nightly"));
            Assert.All(log.Runs.Where(r => r.Job == "nightly" && r.ScheduledFor >= redeployedAt.AddSeconds(1)), r => Assert.Equal(0, r.ScheduledFor.Second % 3));
        }
        finally
        {
            await StopAllAsync(hosts);
        }
    }

    /// <summary>
    /// Schedules changed again and again at runtime on three hosts, each change on another host than the last, so the
    /// hosts disagree about the schedule most of the time: every occurrence still runs at most once, and the job keeps
    /// running on whichever schedule is the latest.
    /// </summary>
    [Fact]
    public async Task AddOrUpdate_ManyChangesOnThreeHosts_EachOccurrenceRunsAtMostOnce()
    {
        var log = new RunLog();
        string prefix = DurableTestHost.NewPrefix();
        var hosts = new List<DurableTestHost>();
        try
        {
            foreach (string name in new[] { "a", "b", "c" })
            {
                hosts.Add(await StartAsync(log, prefix, name, EverySecond));
            }

            await log.WaitForAsync("nightly", DateTimeOffset.UtcNow, "a first occurrence");
            string[] schedules = ["*/2 * * * * *", EverySecond, "0/3 * * * * *", "*/2 * * * * *"];
            for (int i = 0; i < 12; i++)
            {
                Jobs(hosts[i % 3]).AddOrUpdate<RunHandler>("nightly", schedules[i % schedules.Length], o => o.Queue = Queue);

                // Paces the changes across occurrences (what is asserted does not depend on it).
                await Task.Delay(TimeSpan.FromMilliseconds(700));
            }

            await WaitForScheduleAsync(prefix, $"|r|{schedules[11 % schedules.Length]} (UTC)|", "the latest schedule stored in Redis");
            var lastChange = DateTimeOffset.UtcNow;
            await log.WaitForAsync("nightly", lastChange.AddSeconds(1), "an occurrence on the latest schedule");
            await log.WaitForAsync("fence", lastChange.AddSeconds(3), "three more seconds");
            var repeated = log.Runs.Where(r => r.Job == "nightly" && !r.IsTriggeredManually).GroupBy(r => r.ScheduledFor).Where(g => g.Count() > 1)
                .Select(g => $"{g.Key:O} x{g.Count()} on {string.Join(",", g.Select(r => r.Instance))}").ToArray();
            Assert.True(repeated.Length == 0, "Occurrences run more than once: " + string.Join("; ", repeated));

            // The latest schedule, every even second, set on c: only c runs it now, and no odd second runs.
            AssertOnlyEvenSecondsSince(log, lastChange.AddSeconds(1));
        }
        finally
        {
            await StopAllAsync(hosts);
        }
    }

    /// <summary>
    /// A runtime AddOrUpdate whose write to Redis fails (Redis refuses writes: over its maxmemory) is tried again, so the
    /// new schedule runs once Redis takes writes. Before, it was not written again: the store kept the old schedule and
    /// refused every offer of the new one, so with one instance the job ran nowhere until a restart or another change.
    /// </summary>
    [Fact]
    public async Task AddOrUpdate_WriteRefusedByRedis_TheNewScheduleRunsOnceRedisTakesWrites()
    {
        var log = new RunLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var host = await StartAsync(log, prefix, "a", EverySecond);
        var jobs = Jobs(host);
        await log.WaitForAsync("nightly", DateTimeOffset.UtcNow, "a first occurrence");
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var server = client.GetServers()[0];
        try
        {
            await server.ConfigSetAsync("maxmemory", "1");
            jobs.AddOrUpdate<RunHandler>("nightly", "*/2 * * * * *", o => o.Queue = Queue);

            // Its offers wait for the write's first attempt: one refused for memory means the write was refused too.
            await Wait.UntilAsync(() => jobs.Find("nightly")!.LastRun?.Error?.Contains("OOM", StringComparison.Ordinal) == true, "an offer of the new schedule refused by Redis");
        }
        finally
        {
            await server.ConfigSetAsync("maxmemory", "0");
        }

        var restoredAt = DateTimeOffset.UtcNow;
        await log.WaitForAsync("nightly", restoredAt.AddSeconds(1), "an occurrence of the new schedule once Redis takes writes");
        AssertOnlyEvenSecondsSince(log, restoredAt.AddSeconds(1));
    }

    /// <summary>
    /// A job paused and then removed at runtime, added again: it runs (a fresh job). Before, the removal left the pause
    /// in Redis, so every offer of the re-added job was refused as paused, on every instance, with no pause asked for.
    /// </summary>
    [Fact]
    public async Task Remove_OfAPausedJob_AddedAgain_RunsUnpaused()
    {
        var log = new RunLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var host = await StartAsync(log, prefix, "a", EverySecond);
        var jobs = Jobs(host);
        await log.WaitForAsync("nightly", DateTimeOffset.UtcNow, "a first occurrence");
        await using (var client = await DurableTestHost.ConnectAsync(redis.Server))
        {
            var db = client.GetDatabase();
            Assert.True(jobs.Pause("nightly"));
            await Wait.UntilAsync(() => db.HashExists($"{prefix}:{{{Queue}}}:recurring", "~nightly"), "the pause stored in Redis");
        }

        Assert.True(jobs.Remove("nightly"));
        await WaitForScheduleAsync(prefix, "|x|", "the tombstone stored in Redis");
        jobs.AddOrUpdate<RunHandler>("nightly", EverySecond, o => o.Queue = Queue);
        var addedAt = DateTimeOffset.UtcNow;
        await log.WaitForAsync("nightly", addedAt.AddSeconds(1), "an occurrence after the job was added again");
        Assert.False(jobs.Find("nightly")!.IsPaused);
    }

    /// <summary>
    /// Redis loses its data (FLUSHALL) while two hosts disagree about the schedule (every odd second in code; a runtime
    /// change to every even second on a, so b is superseded): the first offer after the loss writes its schedule again,
    /// so one schedule runs afterwards (whichever offered first). Before, the lost record let both schedules claim.
    /// </summary>
    [Fact]
    public async Task RedisLostItsData_HostsDisagreeingOnTheSchedule_OneScheduleRunsAfterwards()
    {
        var log = new RunLog();
        string prefix = DurableTestHost.NewPrefix();
        var hosts = new List<DurableTestHost>();
        try
        {
            const string OddSeconds = "1/2 * * * * *";
            hosts.Add(await StartAsync(log, prefix, "a", OddSeconds));
            hosts.Add(await StartAsync(log, prefix, "b", OddSeconds));
            await log.WaitForAsync("nightly", DateTimeOffset.UtcNow, "a first occurrence");
            Jobs(hosts[0]).AddOrUpdate<RunHandler>("nightly", "*/2 * * * * *", o => o.Queue = Queue);
            await WaitForScheduleAsync(prefix, "|r|*/2 * * * * * (UTC)|", "the new schedule stored in Redis");
            await Wait.UntilAsync(
                () => Jobs(hosts[1]).Find("nightly")!.LastRun is { Outcome: RecurringRunOutcome.Skipped, Error: { } error } && error.Contains("schedule", StringComparison.Ordinal),
                "b superseded");

            await using (var client = await DurableTestHost.ConnectAsync(redis.Server))
            {
                await client.GetServers()[0].FlushAllDatabasesAsync();
            }

            var lostAt = DateTimeOffset.UtcNow;
            await log.WaitForAsync("fence", lostAt.AddSeconds(6), "six seconds after the loss");
            var after = log.Runs.Where(r => r.Job == "nightly" && !r.IsTriggeredManually && r.ScheduledFor >= lostAt.AddSeconds(1)).ToArray();
            Assert.NotEmpty(after);
            Assert.True(
                after.Select(r => r.ScheduledFor.Second % 2).Distinct().Count() == 1,
                "Both schedules ran after the loss: " + string.Join("; ", after.Select(r => $"{r.ScheduledFor:O}")));
        }
        finally
        {
            await StopAllAsync(hosts);
        }
    }

    /// <summary>
    /// A host whose clock runs 2 s ahead fires on Redis's clock (its offset is measured from each round), so it does not
    /// start an occurrence 2 s before its time; before, it claimed every occurrence early by its skew. The start is
    /// measured on the test's clock, which is Redis's (same machine).
    /// </summary>
    [Fact]
    public async Task ClockTwoSecondsAhead_OccurrencesStartNoEarlierThanTheirTime()
    {
        var log = new RunLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var host = await StartAsync(log, prefix, "fast", EverySecond, clock: new SkewedTime(TimeSpan.FromSeconds(2)));
        var startedAt = DateTimeOffset.UtcNow;
        await log.WaitForAsync("nightly", startedAt.AddSeconds(5), "five occurrences");

        var runs = log.Runs.Where(r => r.Job == "nightly" && r.ScheduledFor >= startedAt.AddSeconds(2)).ToArray();
        Assert.NotEmpty(runs);
        var early = runs.Where(r => r.StartedAt < r.ScheduledFor - TimeSpan.FromMilliseconds(300)).Select(r => $"{r.ScheduledFor:O} started {(r.ScheduledFor - r.StartedAt).TotalMilliseconds:F0} ms early").ToArray();
        Assert.True(early.Length == 0, "Occurrences started early: " + string.Join("; ", early));
    }

    /// <summary>
    /// In a full queue that rejects, an occurrence another instance already enqueued is reported as enqueued elsewhere,
    /// not as skipped for a full queue (the claim is looked at before the room).
    /// </summary>
    [Fact]
    public async Task FullQueueInRejectMode_OccurrenceEnqueuedElsewhere_ReportedEnqueuedElsewhere()
    {
        var log = new RunLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var host = await StartAsync(log, prefix, "a", EverySecond, fence: false, capacity: 1);
        var jobs = Jobs(host);
        Assert.True(host.Services.GetRequiredService<IWorkQueueProvider>().TryGetControl(Queue, out var control));

        // Every occurrence is claimed by "another instance"; once the queue is empty, nothing is fetched and a manual
        // trigger fills the one place.
        await using (var client = await DurableTestHost.ConnectAsync(redis.Server))
        {
            var db = client.GetDatabase();
            await db.HashSetAsync($"{prefix}:{{{Queue}}}:recurring", "nightly", DateTimeOffset.UtcNow.AddDays(1).ToUnixTimeMilliseconds());
            await Wait.UntilAsync(() => db.StreamLength($"{prefix}:{{{Queue}}}:stream") == 0, "the queue emptied");
        }

        control.Pause();
        await jobs.TriggerNowAsync("nightly");
        var triggeredAt = DateTimeOffset.UtcNow;
        await Wait.UntilAsync(
            () => jobs.Find("nightly")!.LastRun is { } run && run.ScheduledFor > triggeredAt && run.Outcome != RecurringRunOutcome.Enqueued,
            "an occurrence offered to the full queue");
        var last = jobs.Find("nightly")!.LastRun!;
        Assert.True(last.Outcome == RecurringRunOutcome.EnqueuedElsewhere, $"{last.Outcome}: {last.Error}");
    }

    private static void AssertOnlyEvenSecondsSince(RunLog log, DateTimeOffset from)
    {
        var odd = log.Runs.Where(r => r.Job == "nightly" && r.ScheduledFor >= from && r.ScheduledFor.Second % 2 != 0).Select(r => $"{r.ScheduledFor:O} on {r.Instance}").ToArray();
        Assert.True(odd.Length == 0, "The old schedule still ran: " + string.Join("; ", odd));
    }

    /// <summary>Waits until the job's shared schedule in Redis (<c>@nightly</c>: generation|state|schedule|base) contains <paramref name="part"/>.</summary>
    private async Task WaitForScheduleAsync(string prefix, string part, string what)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        await Wait.UntilAsync(() => ((string?)db.HashGet($"{prefix}:{{{Queue}}}:recurring", "@nightly"))?.Contains(part, StringComparison.Ordinal) == true, what);
    }

    private static IRecurringJobs Jobs(DurableTestHost host) => host.Services.GetRequiredService<IRecurringJobs>();

    private Task<DurableTestHost> StartAsync(RunLog log, string prefix, string instance, string cron, TimeProvider? clock = null, bool fence = true, int? capacity = null) =>
        DurableTestHost.StartAsync(
            redis.Server.Configuration,
            instance,
            workQueue =>
            {
                workQueue
                    .AddDurableQueue<RunHandler, RecurringOccurrence>(
                        Queue,
                        o =>
                        {
                            o.MaxWorkers = 2;
                            if (capacity is { } c)
                            {
                                o.Capacity = c;
                                o.FullMode = QueueFullMode.Reject;
                            }
                        },
                        DurableTestHost.Durable(prefix))
                    .AddRecurringJob<RunHandler>("nightly", cron, o => o.Queue = Queue);
                if (fence)
                {
                    workQueue.AddRecurringJob<RunHandler>("fence", EverySecond, o => o.Queue = Queue);
                }
            },
            b =>
            {
                b.Services.AddSingleton(log);
                if (clock is not null)
                {
                    b.Services.AddSingleton(new WorkQueueEnvironment(clock, Random.Shared.NextDouble));
                }
            });

    private static async Task StopAllAsync(List<DurableTestHost> hosts)
    {
        foreach (var host in hosts)
        {
            await host.DisposeAsync();
        }
    }

    public sealed record Run(string Job, DateTimeOffset ScheduledFor, bool IsTriggeredManually, string Instance, DateTimeOffset StartedAt);

    public sealed class RunLog
    {
        private readonly ConcurrentQueue<Run> _runs = new();

        public IReadOnlyList<Run> Runs => [.. _runs];

        public void Add(Run run) => _runs.Enqueue(run);

        /// <summary>Waits until an occurrence of <paramref name="job"/> scheduled at or after <paramref name="from"/> ran.</summary>
        public Task WaitForAsync(string job, DateTimeOffset from, string what) =>
            Wait.UntilAsync(() => _runs.Any(r => r.Job == job && !r.IsTriggeredManually && r.ScheduledFor >= from), what);
    }

    public sealed class RunHandler(RunLog log, InstanceName instance) : IJobHandler<RecurringOccurrence>
    {
        public ValueTask ExecuteAsync(RecurringOccurrence payload, CancellationToken cancellationToken)
        {
            log.Add(new Run(payload.RecurringJobId, payload.ScheduledFor, payload.IsTriggeredManually, instance.Value, DateTimeOffset.UtcNow));
            return ValueTask.CompletedTask;
        }
    }

    /// <summary>The machine's clock, <paramref name="skew"/> ahead (timers and timestamps unchanged).</summary>
    private sealed class SkewedTime(TimeSpan skew) : TimeProvider
    {
        public override DateTimeOffset GetUtcNow() => System.GetUtcNow() + skew;
    }
}
