using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using WorkQueue.Testing.Tests.TestSupport;

namespace WorkQueue.Testing.Tests.Internal;

/// <summary>
/// The harness on a durable queue (Redis Streams, against a real redis-server): the idle wait reads Redis's figures, and
/// Record and Inline modes hold or run the job before anything reaches Redis.
/// </summary>
public sealed class DurableHarnessTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const string Queue = "mail";

    [Fact]
    public async Task WaitUntilIdleAsync_DurableJobsHandOnToAnInMemoryQueue_ReturnsAfterAllRan()
    {
        using var host = await StartAsync();
        var mail = host.Services.GetRequiredKeyedService<IWorkQueue>(Queue);

        for (int i = 0; i < 5; i++)
        {
            await mail.EnqueueAsync<HandOnHandler, string>($"mail{i}");
        }

        await Harness(host).WaitUntilIdleAsync(Wait.Generous);

        var runs = host.Services.GetRequiredService<JobLog>().Runs;
        Assert.Equal(10, runs.Count);
        Assert.All(Enumerable.Range(0, 5), i => Assert.Contains($"mail{i}-next", runs));
        Assert.Equal(5, Harness(host).EnqueuedFor<HandOnHandler>(Queue).Count);
        Assert.Equal(5, Harness(host).EnqueuedFor<SlowLogHandler>("second").Count);
    }

    [Fact]
    public async Task WaitUntilIdleAsync_DurableJobRunning_TimeoutNamesTheQueueWhatRedisHoldsAndTheJob()
    {
        using var host = await StartAsync();
        var log = host.Services.GetRequiredService<JobLog>();
        var result = await host.Services.GetRequiredKeyedService<IWorkQueue>(Queue).EnqueueAsync<BlockingHandler, string>("held", new JobOptions { IdempotencyKey = "k" });
        await Wait.UntilAsync(() => host.Services.GetQueueSnapshot(Queue).RunningJobs == 1, "the durable job runs");

        var error = await Assert.ThrowsAsync<TimeoutException>(() => Harness(host).WaitUntilIdleAsync(TimeSpan.FromSeconds(3)));

        AssertSays(error, $"queue '{Queue}': durable: in Redis 1 unfinished (1 fetched by a consumer");
        AssertSays(error, "here 1 held, 1 running");
        // A durable job is named by its job type.
        AssertSays(error, $"job {result.JobId} blocking: Running, attempt 1");

        log.Gate.SetResult();
        await Harness(host).WaitUntilIdleAsync(Wait.Generous);
        Assert.Equal(["held"], log.Runs);
    }

    [Fact]
    public async Task WaitUntilIdleAsync_JobStoredByAnotherInstance_WaitedForUntilRedisIsReadAgain()
    {
        // Two instances on one queue; the job is stored by the other one, so nothing in this process moves: only the
        // figures read from Redis show it, and the ones read before the enqueue said the queue was empty.
        string prefix = NewPrefix();
        using var here = await StartAsync(prefix: prefix);
        using var other = await StartAsync(prefix: prefix, harness: false);
        await Harness(here).WaitUntilIdleAsync(Wait.Generous);
        Control(here).Pause();
        Control(other).Pause();

        await other.Services.GetRequiredKeyedService<IWorkQueue>(Queue).EnqueueAsync<LogHandler, string>("from the other instance");

        var error = await Assert.ThrowsAsync<TimeoutException>(() => Harness(here).WaitUntilIdleAsync(TimeSpan.FromSeconds(3)));
        AssertSays(error, $"queue '{Queue}': durable: in Redis 1 unfinished (0 fetched by a consumer, 1 not fetched yet)");
        AssertSays(error, "paused");

        Control(here).Resume();
        await Harness(here).WaitUntilIdleAsync(Wait.Generous);
        Assert.Equal(["from the other instance", "scope disposed"], here.Services.GetRequiredService<JobLog>().Runs);
    }

    [Fact]
    public async Task EnqueueAsync_DurableQueueRecordMode_HeldAndNothingReachesRedis()
    {
        using var host = await StartAsync(o => o.SetMode(Queue, WorkQueueTestMode.Record));
        var mail = host.Services.GetRequiredKeyedService<IWorkQueue>(Queue);

        var result = await mail.EnqueueAsync<LogHandler, string>("receipt", new JobOptions { IdempotencyKey = "order-7", Delay = TimeSpan.FromMinutes(1) });
        await Harness(host).WaitUntilIdleAsync(Wait.Generous);

        var job = Assert.Single(Harness(host).EnqueuedFor<LogHandler>(Queue));
        Assert.Equal((result.JobId, "receipt", "order-7", (TimeSpan?)TimeSpan.FromMinutes(1)), (job.JobId, job.PayloadAs<string>(), job.IdempotencyKey, job.Delay));
        Assert.Equal(JobState.Scheduled, (await mail.GetJobAsync(result.JobId))!.State);
        var durable = host.Services.GetQueueSnapshot(Queue).Durable!;
        Assert.Equal((0L, 0L), (durable.StreamLength, durable.Scheduled ?? 0));
        Assert.Empty(host.Services.GetRequiredService<JobLog>().Runs);
    }

    [Fact]
    public async Task EnqueueAsync_DurableQueueInlineMode_RunsInTheCall()
    {
        using var host = await StartAsync(o => o.Mode = WorkQueueTestMode.Inline);

        await host.Services.GetRequiredKeyedService<IWorkQueue>(Queue).EnqueueAsync<LogHandler, string>("inline");

        Assert.Equal(["inline", "scope disposed"], host.Services.GetRequiredService<JobLog>().Runs);
    }

    private static IWorkQueueTestHarness Harness(IHost host) => host.Services.GetRequiredService<IWorkQueueTestHarness>();

    private static IWorkQueueControl Control(IHost host) =>
        host.Services.GetRequiredService<IWorkQueueProvider>().TryGetControl(Queue, out var control) ? control : throw new InvalidOperationException("no queue");

    private static string NewPrefix() => "t" + Guid.NewGuid().ToString("N")[..8];

    private async Task<IHost> StartAsync(Action<WorkQueueTestingOptions>? testing = null, string? prefix = null, bool harness = true)
    {
        prefix ??= NewPrefix();
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Services.AddSingleton<JobLog>().AddScoped<ScopedProbe>();
        builder.Services.AddRedisWarmup(o => o.Configuration = redis.Server.Configuration);
        builder.Services.AddWorkQueue()
            .AddQueue("second")
            .AddDurableQueue(Queue, o => o.TrackAllJobs = true, d => d.KeyPrefix = prefix)
            .AddJobType<HandOnHandler, string>("hand-on")
            .AddJobType<BlockingHandler, string>("blocking")
            .AddJobType<LogHandler, string>("log");
        if (harness)
        {
            builder.Services.AddWorkQueueTesting(testing);
        }

        var host = builder.Build();
        await host.StartAsync();
        return host;
    }

    private static void AssertSays(Exception error, string part) =>
        Assert.True(error.Message.Contains(part, StringComparison.Ordinal), $"Expected '{part}' in: {error.Message}");
}
