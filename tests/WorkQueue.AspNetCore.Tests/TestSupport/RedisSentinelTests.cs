using System.Diagnostics;
using StackExchange.Redis;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.TestSupport;

/// <summary>The Sentinel fixture (<c>tests/Shared/RedisSentinel.cs</c>) fails over as the failover tests rely on.</summary>
public sealed class RedisSentinelTests
{
    [Fact]
    public async Task KillPrimaryAndWaitForPromotionAsync_PrimaryKilled_ReplicaPromotedWithTheWrites()
    {
        var clock = Stopwatch.StartNew();
        await using var sentinel = await RedisSentinel.StartAsync();
        var started = clock.Elapsed;
        var oldPrimary = sentinel.Primary;
        foreach (var one in sentinel.Sentinels)
        {
            Assert.Equal(oldPrimary.Port, await sentinel.PrimaryPortAsync(one));
        }

        string key = "fixture:" + Guid.NewGuid().ToString("N");
        await using (var before = await ConnectionMultiplexer.ConnectAsync(sentinel.Configuration))
        {
            // Through the Sentinels, the client finds the primary and writes there.
            var db = before.GetDatabase();
            await db.StringSetAsync(key, "written");
            Assert.Equal(1, (long)await db.ExecuteAsync("WAIT", 1, 10_000));
        }

        clock.Restart();
        var promoted = await sentinel.KillPrimaryAndWaitForPromotionAsync();
        var failover = clock.Elapsed;

        Assert.Same(sentinel.Replication.Replica, promoted);
        Assert.Same(promoted, sentinel.Primary);
        Assert.Equal("master", await promoted.InfoFieldAsync("replication", "role"));
        Assert.Equal("written", await promoted.CommandAsync("GET", key));

        await using var after = await ConnectionMultiplexer.ConnectAsync(sentinel.Configuration);
        var afterDb = after.GetDatabase();
        Assert.Equal("written", (string?)await afterDb.StringGetAsync(key));
        await afterDb.StringSetAsync(key, "after");
        Assert.Equal("after", await promoted.CommandAsync("GET", key));
        TestContext.Current.TestOutputHelper?.WriteLine($"started in {started.TotalMilliseconds:F0} ms, promoted {failover.TotalMilliseconds:F0} ms after the kill");
    }
}
