using Microsoft.Extensions.DependencyInjection;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Durable recurring jobs when something goes wrong around an occurrence or is changed at runtime: a paused job's
/// catch-up, an occurrence the store cannot take when it falls due, a pause on one of several instances (all found by a
/// review of issue 19; all failed before their fixes).
/// </summary>
public sealed class DurableRecurringResilienceTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const string Queue = DurableRecurringTests.Queue;

    /// <summary>
    /// A job registered paused does not run, not even the catch-up of occurrences missed while no instance ran
    /// (RunOnce), which before fired without looking at the pause. The manual trigger is the fence: it goes through the same queue after the catch-up.
    /// </summary>
    [Fact]
    public async Task StartPaused_OccurrencesMissedWhileNoHostRan_NoCatchUpRuns()
    {
        var log = new DurableRecurringTests.OccurrenceLog();
        string prefix = DurableTestHost.NewPrefix();
        await using (var redisClient = await DurableTestHost.ConnectAsync(redis.Server))
        {
            await redisClient.GetDatabase().HashSetAsync($"{prefix}:{{{Queue}}}:recurring", "nightly", DateTimeOffset.UtcNow.AddMinutes(-10).ToUnixTimeMilliseconds());
        }

        var started = DateTimeOffset.UtcNow;
        await using var a = await StartRecurringAsync(log, prefix, "a", o => o.StartPaused = true);
        var jobs = a.Services.GetRequiredService<IRecurringJobs>();
        Assert.True(jobs.Find("nightly")!.IsPaused);

        await jobs.TriggerNowAsync("nightly");
        await log.WaitUntilAsync(l => l.Any(o => o.IsTriggeredManually), "the manual trigger");
        Assert.DoesNotContain(log.Runs, r => !r.IsTriggeredManually && r.ScheduledFor <= started);
    }

    /// <summary>
    /// An occurrence whose enqueue fails (Redis refusing writes, unreachable, or not answering in time at that moment)
    /// is offered again with a backoff until the next occurrence is due (the claim in Redis makes the repeated offers
    /// harmless), so a few seconds of failover do not cost a nightly job its night; before, it was recorded as skipped
    /// and never offered again. Here Redis refuses writes (out of memory) across one occurrence and takes them again
    /// well before the next.
    /// </summary>
    [Fact]
    public async Task OccurrenceDueWhileRedisRefusesWrites_RunsOnceRedisTakesThemAgain()
    {
        await using var own = await RedisServer.StartAsync();
        var log = new DurableRecurringTests.OccurrenceLog();
        await using var a = await StartRecurringAsync(own, "*/5 * * * * *", log, DurableTestHost.NewPrefix(), "a");
        var jobs = a.Services.GetRequiredService<IRecurringJobs>();
        await using var admin = await DurableTestHost.ConnectAsync(own);
        var server = admin.GetServer(admin.GetEndPoints()[0]);

        await log.WaitUntilAsync(l => l.Count > 0, "the first occurrence");
        var first = log.Runs.Max(r => r.ScheduledFor);
        await server.ConfigSetAsync("maxmemory", "1");
        try
        {
            // Not skipped: still enqueued-to-be, with the reason, and offered again.
            await Wait.UntilAsync(
                () => jobs.Find("nightly")!.LastRun is { Outcome: RecurringRunOutcome.Enqueued, Error: { } error } run && run.ScheduledFor > first && error.StartsWith("not stored yet", StringComparison.Ordinal),
                "an occurrence refused by Redis, waiting to be offered again");
        }
        finally
        {
            await server.ConfigSetAsync("maxmemory", "0");
        }

        var refused = jobs.Find("nightly")!.LastRun!.ScheduledFor;
        await log.WaitUntilAsync(l => l.Any(o => o.ScheduledFor > refused), "the occurrence after the refused one");
        Assert.Contains(log.Runs, r => r.ScheduledFor == refused);
    }

    /// <summary>
    /// A pause on one instance holds on every instance: it is stored in Redis, and the claim refuses every instance's
    /// offers until a resume on any instance (before, the other instances kept offering and running every occurrence).
    /// The other instance learns it at its next offer and then shows the job paused.
    /// </summary>
    [Fact]
    public async Task Pause_OnOneInstance_HoldsOnEveryInstanceUntilAnyResumes()
    {
        var log = new DurableRecurringTests.OccurrenceLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var a = await StartRecurringAsync(redis.Server, "* * * * * *", log, prefix, "a");
        await using var b = await StartRecurringAsync(redis.Server, "* * * * * *", log, prefix, "b");
        var jobsA = a.Services.GetRequiredService<IRecurringJobs>();
        var jobsB = b.Services.GetRequiredService<IRecurringJobs>();
        await log.WaitUntilAsync(l => l.Count > 0, "a first occurrence");
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();

        Assert.True(jobsA.Pause("nightly"));
        await Wait.UntilAsync(() => db.HashGet($"{prefix}:{{{Queue}}}:recurring", "~nightly") == "1", "the pause stored in Redis");
        var pausedAt = DateTimeOffset.UtcNow;

        // b keeps offering (its own registration is not paused) and is refused: three occurrences in a row.
        await Wait.UntilAsync(
            () => jobsB.Find("nightly") is { IsPaused: true, LastRun: { Outcome: RecurringRunOutcome.Skipped } run } && run.ScheduledFor >= pausedAt.AddSeconds(3),
            "instance b refused three occurrences after the pause, and showing the job paused");
        Assert.DoesNotContain(log.Runs, r => !r.IsTriggeredManually && r.ScheduledFor >= pausedAt.AddSeconds(1));

        // A resume on the other instance lifts it for both.
        Assert.True(jobsB.Resume("nightly"));
        var resumedAt = DateTimeOffset.UtcNow;
        await log.WaitUntilAsync(l => l.Any(o => !o.IsTriggeredManually && o.ScheduledFor > resumedAt.AddSeconds(1)), "an occurrence after the resume");
        Assert.False(jobsB.Find("nightly")!.IsPaused);
        Assert.True((await db.HashGetAsync($"{prefix}:{{{Queue}}}:recurring", "~nightly")).IsNull, "the pause is gone from Redis");
    }

    /// <summary>
    /// Changing a running job's schedule does not run the new schedule's latest occurrence before now at once (before,
    /// a replaced job looked for missed occurrences as a start does, so an hourly job changed to every minute ran a past
    /// minute immediately). The manual trigger is the fence.
    /// </summary>
    [Fact]
    public async Task AddOrUpdate_ChangedSchedule_NoCatchUpOfTheNewSchedulesPast()
    {
        var log = new DurableRecurringTests.OccurrenceLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var a = await StartRecurringAsync(redis.Server, "0 0 1 1 *", log, prefix, "a");
        var jobs = a.Services.GetRequiredService<IRecurringJobs>();
        await using (var client = await DurableTestHost.ConnectAsync(redis.Server))
        {
            await client.GetDatabase().HashSetAsync($"{prefix}:{{{Queue}}}:recurring", "nightly", DateTimeOffset.UtcNow.AddMinutes(-10).ToUnixTimeMilliseconds());
        }

        var changedAt = DateTimeOffset.UtcNow;
        jobs.AddOrUpdate<DurableRecurringTests.TickHandler>("nightly", "* * * * *", o => o.Queue = Queue);
        await jobs.TriggerNowAsync("nightly");
        await log.WaitUntilAsync(l => l.Any(o => o.IsTriggeredManually), "the manual trigger");
        Assert.DoesNotContain(log.Runs, r => !r.IsTriggeredManually && r.ScheduledFor <= changedAt);
    }

    private Task<DurableTestHost> StartRecurringAsync(DurableRecurringTests.OccurrenceLog log, string prefix, string instance, Action<RecurringJobOptions>? configure = null) =>
        StartRecurringAsync(redis.Server, "* * * * *", log, prefix, instance, configure);

    private static Task<DurableTestHost> StartRecurringAsync(RedisServer server, string cron, DurableRecurringTests.OccurrenceLog log, string prefix, string instance, Action<RecurringJobOptions>? configure = null) =>
        DurableRecurringTests.StartRecurringAsync(server, log, prefix, instance, "nightly", cron, configure);
}
