using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using PayCallbackApi.Tests.TestSupport;

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

    [Fact]
    public async Task NaiveMode_NoWarmupAndALazyMultiplexer()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Naive);
        using var client = app.CreateClient();

        var report = await app.Services.GetRequiredService<HealthCheckService>().CheckHealthAsync();

        Assert.DoesNotContain("redis-warmup", report.Entries.Keys);
    }
}
