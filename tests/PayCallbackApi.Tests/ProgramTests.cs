using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using PayCallbackApi.Tests.TestSupport;
using WorkQueue;

namespace PayCallbackApi.Tests;

/// <summary>How each mode sets up Redis (<c>Program.cs</c>).</summary>
public sealed class ProgramTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task QueueMode_RedisWarmedWithDedicatedIoThreads()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue);
        using var client = app.CreateClient();

        var report = await app.Services.GetRequiredService<HealthCheckService>().CheckHealthAsync(r => r.Name == "redis-warmup");

        var entry = Assert.Contains("redis-warmup", report.Entries);
        Assert.Equal(HealthStatus.Healthy, entry.Status);
        Assert.Equal("dedicated", entry.Data["ioThreads"]);
    }

    // The queues are declared once (SampleQueues): every mode has the same ones with the same engine settings, and Durable
    // mode differs only in their store (and the capacity of payments, whose backlog waits in Redis there).
    [Theory]
    [InlineData(ProcessingMode.Queue)]
    [InlineData(ProcessingMode.Durable)]
    [InlineData(ProcessingMode.Bare)]
    [InlineData(ProcessingMode.Naive)]
    public async Task EveryMode_TheSameQueues_DurableOnlyInDurableMode(ProcessingMode mode)
    {
        await using var app = new PayCallbackApp(redis.Server, mode);
        using var client = app.CreateClient();

        var queues = app.Services.GetRequiredService<IWorkQueueProvider>().Queues.Select(q => q.GetSnapshot()).ToDictionary(s => s.Name);

        Assert.Equal(["default", SampleQueues.Legacy, SampleQueues.Payments, SampleQueues.Settlement], queues.Keys.Order(StringComparer.Ordinal));
        bool durable = mode == ProcessingMode.Durable;
        Assert.All([SampleQueues.Payments, SampleQueues.Legacy, SampleQueues.Settlement], name => Assert.Equal(durable, queues[name].Durable is not null));
        Assert.Null(queues["default"].Durable);
        var payments = queues[SampleQueues.Payments];
        Assert.Equal((2, 16, QueueFullMode.Reject, durable ? 200_000 : 50_000), (payments.MinWorkers, payments.MaxWorkers, payments.FullMode, payments.Capacity));
        var legacy = queues[SampleQueues.Legacy];
        Assert.Equal((32, 256, QueueFullMode.Wait, 200_000), (legacy.MinWorkers, legacy.MaxWorkers, legacy.FullMode, legacy.Capacity));
        Assert.Equal(1, queues[SampleQueues.Settlement].MaxWorkers);
    }

    [Fact]
    public async Task NaiveMode_NoWarmupAndALazyMultiplexer()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Naive);
        using var client = app.CreateClient();

        var report = await app.Services.GetRequiredService<HealthCheckService>().CheckHealthAsync();

        Assert.DoesNotContain("redis-warmup", report.Entries.Keys);
    }
}
