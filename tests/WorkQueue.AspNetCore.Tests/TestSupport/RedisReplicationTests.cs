using StackExchange.Redis;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.TestSupport;

/// <summary>The primary + replica fixture (<c>tests/Shared/RedisReplication.cs</c>) does what the replica-acknowledgement tests rely on.</summary>
public sealed class RedisReplicationTests(RedisReplicationFixture fixture) : IClassFixture<RedisReplicationFixture>
{
    [Fact]
    public async Task StartAsync_ReplicaLinkUp_WaitIsAcknowledgedAndTheReplicaHasTheWrite()
    {
        var replication = fixture.Replication;
        Assert.Equal("up", await replication.Replica.InfoFieldAsync("replication", "master_link_status"));
        Assert.Equal("slave", await replication.Replica.InfoFieldAsync("replication", "role"));

        await using var primary = await ConnectionMultiplexer.ConnectAsync(replication.Primary.Configuration);
        var db = primary.GetDatabase();
        string key = "fixture:" + Guid.NewGuid().ToString("N");
        await db.StringSetAsync(key, "written");
        Assert.Equal(1, (long)await db.ExecuteAsync("WAIT", 1, 10_000));
        Assert.Equal("written", await replication.Replica.CommandAsync("GET", key));
    }

    [Fact]
    public async Task Pause_ReplicaFrozen_WaitTimesOutUntilResumed()
    {
        var replication = fixture.Replication;
        await using var primary = await ConnectionMultiplexer.ConnectAsync(replication.Primary.Configuration);
        var db = primary.GetDatabase();
        string key = "fixture:" + Guid.NewGuid().ToString("N");
        replication.Replica.Pause();
        try
        {
            await db.StringSetAsync(key, "written");
            Assert.Equal(0, (long)await db.ExecuteAsync("WAIT", 1, 200));
        }
        finally
        {
            replication.Replica.Resume();
        }

        // Thawed, it takes what it missed and acknowledges it.
        Assert.Equal(1, (long)await db.ExecuteAsync("WAIT", 1, 10_000));
        Assert.Equal("written", await replication.Replica.CommandAsync("GET", key));
        await replication.WaitForLinksAsync();
    }
}
