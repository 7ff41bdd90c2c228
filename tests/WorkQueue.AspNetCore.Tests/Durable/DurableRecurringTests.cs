using System.Collections.Concurrent;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Recurring jobs on a durable queue, several hosts sharing one real redis-server: each occurrence runs once across
/// them, one host stopping mid-way loses none, and occurrences missed while no host ran are run once or skipped.
/// </summary>
public sealed class DurableRecurringTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    /// <summary>The queue of the recurring tests' occurrences (<see cref="TickHandler"/>).</summary>
    internal const string Queue = "ticks";

    [Fact]
    public async Task EverySecond_ThreeHosts_EachOccurrenceRunsExactlyOnce_EvenWhenOneStopsMidway()
    {
        var log = new OccurrenceLog();
        string prefix = DurableTestHost.NewPrefix();
        var hosts = new List<DurableTestHost>();
        try
        {
            foreach (string name in new[] { "a", "b", "c" })
            {
                hosts.Add(await StartAsync(log, prefix, name, "* * * * * *"));
            }

            // From the first whole second after every host runs, for 12 occurrences; host b stops after the 5th.
            var from = NextSecond(DateTimeOffset.UtcNow);
            await log.WaitUntilAsync(l => l.Count(o => o.ScheduledFor >= from) >= 5, "five occurrences");
            await hosts[1].Host.StopAsync(TimeSpan.FromSeconds(10));
            await log.WaitUntilAsync(l => l.Count(o => o.ScheduledFor >= from) >= 12, "twelve occurrences");

            var runs = log.Runs.Where(r => r.ScheduledFor >= from).ToArray();
            var last = runs.Max(r => r.ScheduledFor);
            var expected = Enumerable.Range(0, (int)(last - from).TotalSeconds + 1).Select(s => from.AddSeconds(s)).ToArray();
            Assert.Equal(expected, runs.Select(r => r.ScheduledFor).Distinct().Order());
            var repeated = runs.GroupBy(r => r.ScheduledFor).Where(g => g.Count() > 1).Select(g => $"{g.Key:O} x{g.Count()} on {string.Join(",", g.Select(r => r.Instance))}").ToArray();
            Assert.True(repeated.Length == 0, "Occurrences run more than once: " + string.Join("; ", repeated));
            Assert.True(runs.Select(r => r.Instance).Distinct().Count() >= 2, "the occurrences were spread over the hosts' workers");
        }
        finally
        {
            foreach (var host in hosts)
            {
                await host.DisposeAsync();
            }
        }
    }

    [Theory]
    [InlineData(MissedOccurrencePolicy.RunOnce, 1)]
    [InlineData(MissedOccurrencePolicy.Skip, 0)]
    public async Task OccurrencesMissedWhileNoHostRan_RunOnceOrSkipped(MissedOccurrencePolicy policy, int expectedCatchUps)
    {
        var log = new OccurrenceLog();
        string prefix = DurableTestHost.NewPrefix();
        await using (var redisClient = await DurableTestHost.ConnectAsync(redis.Server))
        {
            // The latest occurrence any instance enqueued: ten minutes ago (every host was down since).
            var tenMinutesAgo = DateTimeOffset.UtcNow.AddMinutes(-10);
            await redisClient.GetDatabase().HashSetAsync($"{prefix}:{{{Queue}}}:recurring", "nightly", tenMinutesAgo.ToUnixTimeMilliseconds());
        }

        var started = DateTimeOffset.UtcNow;
        await using var a = await StartAsync(log, prefix, "a", "* * * * *", policy);
        await using var b = await StartAsync(log, prefix, "b", "* * * * *", policy);
        var jobs = a.Services.GetRequiredService<IRecurringJobs>();

        // A manual trigger is one more run, after any catch-up that was made at start (both go through the same queue).
        await jobs.TriggerNowAsync("nightly");
        await log.WaitUntilAsync(l => l.Any(o => o.IsTriggeredManually), "the manual trigger");
        var catchUps = log.Runs.Where(r => !r.IsTriggeredManually && r.ScheduledFor <= started).ToArray();
        Assert.Equal(expectedCatchUps, catchUps.Length);
        if (expectedCatchUps == 1)
        {
            // The latest missed minute, not the first.
            Assert.Equal(new DateTimeOffset(started.Year, started.Month, started.Day, started.Hour, started.Minute, 0, TimeSpan.Zero), catchUps[0].ScheduledFor);
        }
    }

    [Fact]
    public async Task AddRecurringJob_DurableQueueOfAnotherPayload_FailsAtStartNamingTheQueue()
    {
        using var host = DurableTestHost.Build(
            redis.Server.Configuration,
            "a",
            workQueue => workQueue
                .AddDurableQueue<TestJobHandler, TestJob>("jobs", configureDurable: d => d.KeyPrefix = DurableTestHost.NewPrefix())
                .AddRecurringJob<TickHandler>("tick", "* * * * *", o => o.Queue = "jobs"),
            b => b.Services.AddSingleton(new JobLog()));
        var ex = await Assert.ThrowsAsync<ArgumentException>(() => host.StartAsync());
        Assert.Equal("Queue", ex.ParamName);
        Assert.Contains("AddJobType<TickHandler, RecurringOccurrence>()", ex.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("@nightly")]
    [InlineData("~nightly")]
    public void AddRecurringJob_IdThatNamesAnotherJobsFieldInRedis_ThrowsNamingTheId(string id)
    {
        // "@nightly"'s last occurrence would be the field that holds "nightly"'s shared schedule (and "~nightly"'s its
        // pause): every round that carried its offer failed in Lua, failing the enqueues sent with it.
        var builder = new ServiceCollection().AddWorkQueue()
            .AddDurableQueue<TickHandler, RecurringOccurrence>(Queue)
            .AddRecurringJob<TickHandler>("nightly", "* * * * *", o => o.Queue = Queue);

        var ex = Assert.Throws<ArgumentException>(() => builder.AddRecurringJob<TickHandler>(id, "* * * * *", o => o.Queue = Queue));

        Assert.Equal("id", ex.ParamName);
        Assert.Contains($"'{id}'", ex.Message, StringComparison.Ordinal);
    }

    private Task<DurableTestHost> StartAsync(OccurrenceLog log, string prefix, string instance, string cron, MissedOccurrencePolicy policy = MissedOccurrencePolicy.RunOnce) =>
        StartRecurringAsync(redis.Server, log, prefix, instance, cron == "* * * * *" ? "nightly" : "tick", cron, o => o.MissedOccurrences = policy);

    /// <summary>
    /// Starts an instance whose queue <see cref="Queue"/> (<see cref="TickHandler"/>, 2 workers) runs the recurring job
    /// <paramref name="id"/> on <paramref name="cron"/>; <paramref name="configure"/> sets the job's options after its queue.
    /// </summary>
    internal static Task<DurableTestHost> StartRecurringAsync(RedisServer server, OccurrenceLog log, string prefix, string instance, string id, string cron, Action<RecurringJobOptions>? configure = null) =>
        DurableTestHost.StartAsync(
            server.Configuration,
            instance,
            workQueue => workQueue
                .AddDurableQueue<TickHandler, RecurringOccurrence>(Queue, o => o.MaxWorkers = 2, DurableTestHost.Durable(prefix))
                .AddRecurringJob<TickHandler>(id, cron, o =>
                {
                    o.Queue = Queue;
                    configure?.Invoke(o);
                }),
            b => b.Services.AddSingleton(log));

    private static DateTimeOffset NextSecond(DateTimeOffset at) =>
        new DateTimeOffset(at.UtcTicks - (at.UtcTicks % TimeSpan.TicksPerSecond), TimeSpan.Zero).AddSeconds(1);

    public sealed record Run(DateTimeOffset ScheduledFor, bool IsTriggeredManually, string Instance);

    public sealed class OccurrenceLog
    {
        private readonly ConcurrentQueue<Run> _runs = new();

        public IReadOnlyList<Run> Runs => [.. _runs];

        public void Add(Run run) => _runs.Enqueue(run);

        public async Task WaitUntilAsync(Func<IReadOnlyList<RecurringOccurrence>, bool> condition, string what) =>
            await Wait.UntilAsync(() => condition([.. _runs.Select(r => new RecurringOccurrence("x", r.ScheduledFor, r.IsTriggeredManually))]), what);
    }

    public sealed class TickHandler(OccurrenceLog log, InstanceName instance) : IJobHandler<RecurringOccurrence>
    {
        public ValueTask ExecuteAsync(RecurringOccurrence payload, CancellationToken cancellationToken)
        {
            log.Add(new Run(payload.ScheduledFor, payload.IsTriggeredManually, instance.Value));
            return ValueTask.CompletedTask;
        }
    }
}
