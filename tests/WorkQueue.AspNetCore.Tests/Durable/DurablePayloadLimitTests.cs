using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Payloads too big for Redis: the one caller who sent one is refused with the limit and the size, before anything is
/// sent, and the enqueues travelling with it are stored as usual.
/// </summary>
public sealed class DurablePayloadLimitTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task EnqueueAsync_OnePayloadOverRedisLimit_IsRefusedAlone_AndTheOthersAreStored()
    {
        await using var own = await RedisServer.StartAsync();
        await using (var admin = await DurableTestHost.ConnectAsync(own))
        {
            await admin.GetServer(admin.GetEndPoints()[0]).ConfigSetAsync("proto-max-bulk-len", "1mb");
        }

        var log = new JobLog();
        string prefix = DurableTestHost.NewPrefix();

        // Admin mode lets the queue read proto-max-bulk-len at connect (CONFIG GET).
        await using var host = await DurableTestHost.StartAsync(own, log, prefix, connection: own.Configuration + ",allowAdmin=true");
        await Eventually.HoldsAsync(() => Task.FromResult(host.Control.GetSnapshot().Durable?.IsConnected == true), "the queue to connect");
        string big = new('x', 2 * 1024 * 1024);

        var small = Enumerable.Range(0, 100).Select(n => host.Producer.EnqueueAsync(new TestJob(n)).AsTask()).ToList();
        var oversized = host.Producer.EnqueueAsync(new TestJob(1000, big)).AsTask();
        small.AddRange(Enumerable.Range(100, 100).Select(n => host.Producer.EnqueueAsync(new TestJob(n)).AsTask()));

        var error = await Assert.ThrowsAsync<ArgumentException>(() => oversized.WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Contains("1047552 bytes", error.Message);
        Assert.Contains($"{Utf8Length(new TestJob(1000, big))} bytes", error.Message);
        Assert.Contains("MaxPayloadBytes", error.Message);
        await Task.WhenAll(small).WaitAsync(TimeSpan.FromSeconds(30));
        await log.WaitUntilAsync(() => log.Completed == 200, "the 200 small jobs to run");
        Assert.Equal(0, log.CallsOf(1000));
    }

    [Fact]
    public async Task EnqueueAsync_PayloadOverMaxPayloadBytes_IsRefusedNamingTheLimitAndTheSize()
    {
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configureDurable: d => d.MaxPayloadBytes = 1_000);

        var job = new TestJob(1, new string('x', 1_000));
        var error = await Assert.ThrowsAsync<ArgumentException>(() => host.Producer.EnqueueAsync(job).AsTask());

        Assert.Contains("1000 bytes", error.Message);
        Assert.Contains($"{Utf8Length(job)} bytes", error.Message);
        await host.Producer.EnqueueAsync(new TestJob(2, new string('x', 900)));
        await log.WaitUntilAsync(() => log.CallsOf(2) == 1, "the payload under the limit to run");
    }

    private static int Utf8Length(TestJob job) => System.Text.Json.JsonSerializer.SerializeToUtf8Bytes(job, System.Text.Json.JsonSerializerOptions.Web).Length;
}
