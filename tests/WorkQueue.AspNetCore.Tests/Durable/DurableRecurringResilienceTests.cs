using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Testing;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Durable recurring jobs when something goes wrong around an occurrence: a paused job's catch-up, and an occurrence
/// the store cannot take when it falls due (both found by a review of issue 19; both failed before their fixes).
/// </summary>
public sealed class DurableRecurringResilienceTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const string Queue = "ticks";

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
        using var a = await StartRecurringAsync(log, prefix, "a", o => o.StartPaused = true);
        var jobs = a.Services.GetRequiredService<IRecurringJobs>();
        Assert.True(jobs.Find("nightly")!.IsPaused);

        await jobs.TriggerNowAsync("nightly");
        await log.WaitUntilAsync(l => l.Any(o => o.IsTriggeredManually), "the manual trigger");
        Assert.Empty(log.Runs.Where(r => !r.IsTriggeredManually && r.ScheduledFor <= started));
        await a.StopAsync(TimeSpan.FromSeconds(10));
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
        using var a = await StartRecurringAsync(own, "*/5 * * * * *", log, DurableTestHost.NewPrefix(), "a");
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
        await a.StopAsync(TimeSpan.FromSeconds(10));
    }

    private Task<IHost> StartRecurringAsync(DurableRecurringTests.OccurrenceLog log, string prefix, string instance, Action<RecurringJobOptions>? configure = null) =>
        StartRecurringAsync(redis.Server, "* * * * *", log, prefix, instance, configure);

    private static async Task<IHost> StartRecurringAsync(RedisServer server, string cron, DurableRecurringTests.OccurrenceLog log, string prefix, string instance, Action<RecurringJobOptions>? configure = null)
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Services.AddSingleton(log).AddSingleton(new InstanceName(instance));
        builder.Services.AddRedisWarmup(o => o.Configuration = server.Configuration);
        builder.Services.AddWorkQueue()
            .AddDurableQueue<DurableRecurringTests.TickHandler, RecurringOccurrence>(Queue, o => o.MaxWorkers = 2, d => { d.KeyPrefix = prefix; d.PollInterval = TimeSpan.FromMilliseconds(200); })
            .AddRecurringJob<DurableRecurringTests.TickHandler>("nightly", cron, o =>
            {
                o.Queue = Queue;
                configure?.Invoke(o);
            });
        var host = builder.Build();
        await host.StartAsync();
        return host;
    }
}
