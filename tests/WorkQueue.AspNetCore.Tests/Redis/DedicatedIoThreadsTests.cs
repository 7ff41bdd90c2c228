using StackExchange.Redis;
using WorkQueue.AspNetCore.Redis;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Redis;

/// <summary>What <see cref="DedicatedIoThreads.Inspect"/> finds about the connections' I/O threads, against real servers.</summary>
public sealed class DedicatedIoThreadsTests
{
    [Fact]
    public async Task Inspect_AnEndpointDiedAfterItAnswered_IsNotTakenForAThreadPoolConnection()
    {
        // A warm-up PINGs every endpoint, then inspects them: a server killed in between (a primary during a failover)
        // has no connection left to report on. That is a connection failure, which a retry can fix, not a connection made
        // on the CLR thread pool, which fails the warm-up for good (DedicatedIoThreadsUnavailableException).
        Assert.True(DedicatedIoThreads.Enable());
        await using var alive = await RedisServer.StartAsync();
        await using var dying = await RedisServer.StartAsync();
        await using var multiplexer = await ConnectionMultiplexer.ConnectAsync($"{alive.Configuration},{dying.Configuration},abortConnect=false");
        var endpoints = multiplexer.GetEndPoints();
        Assert.Equal(2, endpoints.Length);
        foreach (var endpoint in endpoints)
        {
            await multiplexer.GetServer(endpoint).PingAsync();
        }

        Assert.Equal(RedisIoThreads.Dedicated, DedicatedIoThreads.Inspect(multiplexer, endpoints));
        await dying.KillAsync();
        await Eventually.HoldsAsync(() => Task.FromResult(!multiplexer.GetServer(endpoints[1]).IsConnected), "the client to see the killed server gone");

        Assert.Equal(RedisIoThreads.Dedicated, DedicatedIoThreads.Inspect(multiplexer, endpoints));
    }
}
