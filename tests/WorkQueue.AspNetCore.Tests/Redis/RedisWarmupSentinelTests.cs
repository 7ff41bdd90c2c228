using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Redis;

/// <summary>The Redis warm-up through Sentinel (<c>serviceName=</c>), each test with its own servers (a kill is destructive).</summary>
public sealed class RedisWarmupSentinelTests
{
    [Fact]
    public async Task Warmup_StartedAfterAFailover_TheDeadOldPrimaryStillListed_IsWarm()
    {
        // After a failover the Sentinels still list the dead old primary (as a replica of the new one, down), so a
        // process that starts then is given its address among the servers: the warm-up must not wait for it to answer.
        await using var sentinel = await RedisSentinel.StartAsync();
        await sentinel.KillPrimaryAndWaitForPromotionAsync();

        await using var app = await TestApp.StartAsync(
            b => b.Services.AddRedisWarmup(o =>
            {
                o.Configuration = sentinel.Configuration;
                o.FailureMode = RedisWarmupFailureMode.StartNotReady;
                o.Timeout = TimeSpan.FromSeconds(3);
                o.RetryInterval = TimeSpan.FromMilliseconds(200);
            }),
            _ => { });

        var health = app.Services.GetRequiredService<HealthCheckService>();
        await Eventually.HoldsAsync(
            async () => (await health.CheckHealthAsync(c => c.Name == "redis-warmup")).Status == HealthStatus.Healthy,
            "the warm-up through the Sentinels after the failover",
            TimeSpan.FromSeconds(20));
        var db = app.Services.GetRequiredService<IConnectionMultiplexer>().GetDatabase();
        await db.StringSetAsync("after-failover", "written");
        Assert.Equal("written", await sentinel.Primary.CommandAsync("GET", "after-failover"));
    }
}
