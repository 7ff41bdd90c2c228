using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// The Redis warm-up's step that creates every durable queue's consumer group before the host has started (the group's
/// presence right after the start is asserted by <see cref="KedaScalerReadingsTests"/>).
/// </summary>
public sealed class DurableGroupsWarmupTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task Warmup_StreamKeyOfAnotherType_FailsTheStartNamingTheQueueAndTheKey()
    {
        string prefix = DurableTestHost.NewPrefix();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        await redisClient.GetDatabase().StringSetAsync(DurableTestHost.StreamKey(prefix), "not a stream");
        using var host = DurableTestHost.Build(redis.Server, new JobLog(), prefix);

        // RedisWarmupOptions.FailureMode is FailFast by default: the app does not start (it used to start, and the store
        // failed every pass, not ready).
        var failed = await Assert.ThrowsAsync<InvalidOperationException>(() => host.StartAsync());
        Assert.Contains($"Durable queue '{DurableTestHost.Queue}'", failed.Message, StringComparison.Ordinal);
        Assert.Contains(DurableTestHost.StreamKey(prefix), failed.Message, StringComparison.Ordinal);
        Assert.Contains("WRONGTYPE", failed.Message, StringComparison.Ordinal);

        // The queues started with the host's services: stop their threads (each store gives up after its stop timeout).
        await host.StopAsync();
    }
}
