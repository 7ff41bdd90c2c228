using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Testing;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// The durable queues' startup checks of the Redis server (<c>DurableServerChecks</c>), against real redis-servers set up
/// the risky way: each risk is logged naming the setting and its value (event 520), fails startup when the queue's
/// ServerChecks is Fail, and a server that will not tell gets one warning saying so (event 521) while the queue goes on.
/// </summary>
public sealed class DurableServerChecksTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const string Risk = "DurableServerRisk";
    private const string Skipped = "DurableServerChecksSkipped";

    [Fact]
    public async Task StartAsync_AppendOnlyNo_LogsOneWarningNamingTheSettingAndStarts()
    {
        // The fixture's server runs with appendonly no, as Redis does by default.
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configureHost: FakeLogging);

        var risk = Assert.Single(Records(host.Services), r => r.Id.Name == Risk);
        Assert.Equal(LogLevel.Warning, risk.Level);
        Assert.Equal(520, risk.Id.Id);
        Assert.Contains("Durable queue 'jobs'", risk.Message, StringComparison.Ordinal);
        Assert.Contains("appendonly no", risk.Message, StringComparison.Ordinal);
        Assert.Contains("appendonly yes", risk.Message, StringComparison.Ordinal);
        Assert.DoesNotContain(Records(host.Services), r => r.Id.Name == Skipped);
        await host.Producer.EnqueueAsync(new TestJob(1));
        await log.WaitUntilAsync(() => log.Completed == 1, "the job to run on a server with a warning");
    }

    [Theory]
    [InlineData("allkeys-lru")]
    [InlineData("volatile-ttl")]
    public async Task StartAsync_EvictingMaxMemoryPolicy_LogsOneWarningNamingThePolicy(string policy)
    {
        await using var server = await SafeRedisServer.StartAsync("--maxmemory-policy", policy);
        await using var host = await DurableTestHost.StartAsync(server.Redis, new JobLog(), DurableTestHost.NewPrefix(), configureHost: FakeLogging);

        var risk = Assert.Single(Records(host.Services), r => r.Id.Name == Risk);
        Assert.Equal(LogLevel.Warning, risk.Level);
        Assert.Contains($"maxmemory-policy {policy}", risk.Message, StringComparison.Ordinal);
        Assert.Contains("noeviction", risk.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task StartAsync_NoRisk_LogsNothing()
    {
        await using var server = await SafeRedisServer.StartAsync();
        await using var host = await DurableTestHost.StartAsync(server.Redis, new JobLog(), DurableTestHost.NewPrefix(), configureDurable: d => d.ServerChecks = RedisServerCheckMode.Fail, configureHost: FakeLogging);

        Assert.DoesNotContain(Records(host.Services), r => r.Id.Name is Risk or Skipped);
    }

    [Fact]
    public async Task StartAsync_ServerChecksFail_EvictingPolicy_FailsStartupNamingTheSettingAndItsValue()
    {
        await using var server = await SafeRedisServer.StartAsync("--maxmemory-policy", "volatile-lru");
        using var host = DurableTestHost.Build(server.Redis, new JobLog(), DurableTestHost.NewPrefix(), configureDurable: d => d.ServerChecks = RedisServerCheckMode.Fail, configureHost: FakeLogging);

        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => host.StartAsync());

        Assert.Contains("Durable queue 'jobs'", error.Message, StringComparison.Ordinal);
        Assert.Contains("maxmemory-policy volatile-lru", error.Message, StringComparison.Ordinal);
        Assert.Contains("ServerChecks is Fail", error.Message, StringComparison.Ordinal);
        var risk = Assert.Single(Records(host.Services), r => r.Id.Name == Risk);
        Assert.Equal(LogLevel.Error, risk.Level);
    }

    [Fact]
    public async Task StartAsync_ServerChecksFailUnderStartNotReady_NotReadyNamingTheRisk_UntilTheServerIsFixed()
    {
        await using var server = await SafeRedisServer.StartAsync("--appendonly", "no");
        await using var host = await DurableTestHost.StartAsync(
            server.Redis,
            new JobLog(),
            DurableTestHost.NewPrefix(),
            configureDurable: d => d.ServerChecks = RedisServerCheckMode.Fail,
            configureHost: b =>
            {
                FakeLogging(b);
                b.Services.Configure<RedisWarmupOptions>(o =>
                {
                    o.FailureMode = RedisWarmupFailureMode.StartNotReady;
                    o.RetryInterval = TimeSpan.FromMilliseconds(100);
                });
            });
        var health = host.Services.GetRequiredService<HealthCheckService>();

        var report = await health.CheckHealthAsync(r => r.Name == "redis-warmup");
        Assert.Equal(HealthStatus.Unhealthy, report.Status);
        Assert.Contains("appendonly no", report.Entries["redis-warmup"].Description, StringComparison.Ordinal);

        await using (var admin = await DurableTestHost.ConnectAsync(server.Redis))
        {
            await admin.GetServer(admin.GetEndPoints()[0]).ConfigSetAsync("appendonly", "yes");
        }

        await Eventually.HoldsAsync(async () => (await health.CheckHealthAsync(r => r.Name == "redis-warmup")).Status == HealthStatus.Healthy, "ready once appendonly is yes");
    }

    [Fact]
    public async Task StartAsync_InfoRefusedByAcl_LogsOneWarningThatTheChecksCouldNotRun_AndStartsEvenUnderFail()
    {
        await using var admin = await DurableTestHost.ConnectAsync(redis.Server);
        string user = "noinfo" + Guid.NewGuid().ToString("N")[..6];
        await admin.GetServer(admin.GetEndPoints()[0]).ExecuteAsync("ACL", "SETUSER", user, "on", ">secret", "~*", "&*", "+@all", "-info");
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(
            redis.Server,
            log,
            DurableTestHost.NewPrefix(),
            configureDurable: d => d.ServerChecks = RedisServerCheckMode.Fail,
            connection: $"{redis.Server.Configuration},user={user},password=secret",
            configureHost: FakeLogging);

        var skipped = Assert.Single(Records(host.Services), r => r.Id.Name == Skipped);
        Assert.Equal(LogLevel.Warning, skipped.Level);
        Assert.Contains("refused INFO", skipped.Message, StringComparison.Ordinal);
        Assert.Contains("+info", skipped.Message, StringComparison.Ordinal);
        Assert.DoesNotContain(Records(host.Services), r => r.Id.Name == Risk);
        await host.Producer.EnqueueAsync(new TestJob(1));
        await log.WaitUntilAsync(() => log.Completed == 1, "the job to run without the checks");
    }

    [Fact]
    public async Task StartAsync_ServerChecksOff_LogsNothing()
    {
        await using var host = await DurableTestHost.StartAsync(redis.Server, new JobLog(), DurableTestHost.NewPrefix(), configureDurable: d => d.ServerChecks = RedisServerCheckMode.Off, configureHost: FakeLogging);

        Assert.DoesNotContain(Records(host.Services), r => r.Id.Name is Risk or Skipped);
    }

    private static void FakeLogging(Microsoft.Extensions.Hosting.HostApplicationBuilder builder) => builder.Services.AddFakeLogging();

    private static IReadOnlyList<FakeLogRecord> Records(IServiceProvider services) => services.GetFakeLogCollector().GetSnapshot();
}
