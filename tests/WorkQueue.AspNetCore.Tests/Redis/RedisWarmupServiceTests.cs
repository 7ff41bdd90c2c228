using System.Net;
using System.Net.Http.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Diagnostics.HealthChecks;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Redis;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Redis;

public sealed class RedisWarmupServiceTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task Warmup_BeforeFirstRequest_FirstRequestSeesConnectedMultiplexerAndLoadedScript()
    {
        byte[]? scriptSha = null;
        bool? serverRefusedDuringWarmup = null;
        int appPort = RedisServer.FreePort();
        await using var app = await TestApp.StartAsync(
            b => b.Services.AddRedisWarmup(o =>
            {
                o.Configuration = redis.Server.Configuration;
                o.WarmupCallbacks.Add(async (mux, ct) =>
                {
                    var server = mux.GetServer(mux.GetEndPoints()[0]);
                    scriptSha = await server.ScriptLoadAsync("return redis.call('INCR', KEYS[1])");
                    serverRefusedDuringWarmup = await IsRefusedAsync(appPort);
                });
            }),
            web => web.MapGet("/probe", async (IConnectionMultiplexer mux, HttpContext context) =>
            {
                // Sample the state first, before this request does anything that could connect.
                bool connected = mux.IsConnected;
                bool warm = context.RequestServices.GetRequiredService<RedisConnection>().IsWarm;
                var count = await mux.GetDatabase().ScriptEvaluateAsync(scriptSha!, ["probe:count"]);
                return Results.Ok(new { connected, warm, count = (long)count });
            }),
            appPort);

        var probe = await app.Client.GetFromJsonAsync<Probe>("/probe");

        Assert.True(serverRefusedDuringWarmup, "Kestrel accepted connections while the warm-up was still running");
        Assert.NotNull(probe);
        Assert.True(probe.Connected, "the first request found a disconnected multiplexer");
        Assert.True(probe.Warm, "the first request ran before the warm-up completed");
        Assert.Equal(1, probe.Count);
        Assert.Same(app.Services.GetRequiredService<IConnectionMultiplexer>(), app.Services.GetRequiredService<RedisConnection>().Multiplexer);
    }

    [Fact]
    public async Task Warmup_DefaultOptions_ConnectsWithDedicatedIoThreadsAndReportsThemInReadiness()
    {
        await using var app = await TestApp.StartAsync(
            b => b.Services.AddRedisWarmup(o => o.Configuration = redis.Server.Configuration),
            _ => { });

        var report = await app.Services.GetRequiredService<HealthCheckService>().CheckHealthAsync(r => r.Name == "redis-warmup");

        var entry = report.Entries["redis-warmup"];
        Assert.Equal(HealthStatus.Healthy, entry.Status);
        Assert.Equal("dedicated", entry.Data[RedisWarmupHealthCheck.IoThreadsKey]);
        Assert.Equal(RedisIoThreads.Dedicated, app.Services.GetRequiredService<RedisConnection>().IoThreads);
        Assert.True(ConnectionMultiplexer.GetFeatureFlag(DedicatedIoThreads.FeatureFlag));
    }

    [Fact]
    public async Task Warmup_FailFastAndNothingListening_StartupFailsNamingEndpointAndCause()
    {
        int port = RedisServer.FreePort();
        var app = TestApp.Build(
            b => b.Services.AddRedisWarmup(o => { o.Configuration = $"127.0.0.1:{port}"; o.Timeout = TimeSpan.FromSeconds(2); }),
            _ => { });

        var ex = await Assert.ThrowsAsync<InvalidOperationException>(() => app.StartAsync());

        Assert.Contains($"127.0.0.1:{port}", ex.Message);
        Assert.Contains("FailFast", ex.Message);
        var cause = Assert.IsType<RedisConnectionException>(ex.InnerException);
        Assert.Contains(cause.Message, ex.Message);
        await app.DisposeAsync();
    }

    [Fact]
    public async Task Warmup_CallbackThrows_FailFastStartupFailsWithTheCallbacksError()
    {
        var app = TestApp.Build(
            b => b.Services.AddRedisWarmup(o =>
            {
                o.Configuration = redis.Server.Configuration;
                o.WarmupCallbacks.Add((_, _) => throw new InvalidDataException("script missing"));
            }),
            _ => { });

        var ex = await Assert.ThrowsAsync<InvalidOperationException>(() => app.StartAsync());

        Assert.Contains("script missing", ex.Message);
        await app.DisposeAsync();
    }

    [Fact]
    public async Task Warmup_StartNotReady_NotReadyUntilRedisAppearsThenReady()
    {
        int port = RedisServer.FreePort();
        await using var app = await TestApp.StartAsync(
            b => b.Services.AddRedisWarmup(o =>
            {
                o.Configuration = $"127.0.0.1:{port},connectRetry=1";
                o.FailureMode = RedisWarmupFailureMode.StartNotReady;
                o.Timeout = TimeSpan.FromSeconds(1);
                o.RetryInterval = TimeSpan.FromMilliseconds(200);
            }),
            web => web.MapHealthChecks("/health/ready", new HealthCheckOptions { Predicate = c => c.Tags.Contains(WorkQueueHealthCheckTags.Ready) }));

        using (var notReady = await app.Client.GetAsync("/health/ready"))
        {
            Assert.Equal(HttpStatusCode.ServiceUnavailable, notReady.StatusCode);
        }

        await using var late = await RedisServer.StartAsync(port);

        await Wait.UntilAsync(() => app.Client.GetAsync("/health/ready").Result.StatusCode == HttpStatusCode.OK, "readiness turns healthy once Redis is up");
        Assert.True(app.Services.GetRequiredService<IConnectionMultiplexer>().IsConnected);
    }

    [Fact]
    public async Task StopAsync_StartNotReadyWhileAWarmupAttemptHangs_StopsWithoutThrowing()
    {
        // A frozen Redis accepts the connection and never answers: each attempt of the background retry hangs until
        // the warm-up's timeout, so the stop finds one running (a replacement worker stopped during a failover did).
        await using var frozen = await RedisServer.StartAsync();
        frozen.Pause();
        try
        {
            var app = TestApp.Build(
                b => b.Services.AddRedisWarmup(o =>
                {
                    o.Configuration = frozen.Configuration;
                    o.FailureMode = RedisWarmupFailureMode.StartNotReady;
                    o.Timeout = TimeSpan.FromSeconds(3);
                    o.RetryInterval = TimeSpan.FromMilliseconds(50);
                }),
                _ => { });
            await app.StartAsync().WaitAsync(Wait.Generous);

            // The first attempt (in StartingAsync) timed out after 3 s; 300 ms later the retry loop's next attempt,
            // started 50 ms after it, is within its own 3 s.
            await Task.Delay(300);
            await app.StopAsync().WaitAsync(Wait.Generous);
            await app.DisposeAsync();
        }
        finally
        {
            frozen.Resume();
        }
    }

    [Fact]
    public void AddRedisWarmup_CalledTwice_RegistersOneConnectionOneServiceOneCheck()
    {
        var services = new ServiceCollection();

        services.AddRedisWarmup(o => o.Configuration = "a:1");
        services.AddRedisWarmup(o => o.Timeout = TimeSpan.FromSeconds(3));

        Assert.Single(services, d => d.ServiceType == typeof(IConnectionMultiplexer));
        Assert.Single(services, d => d.ImplementationType == typeof(RedisWarmupService));
        using var provider = services.BuildServiceProvider();
        var options = provider.GetRequiredService<Microsoft.Extensions.Options.IOptions<WorkQueue.AspNetCore.RedisWarmupOptions>>().Value;
        Assert.Equal(("a:1", TimeSpan.FromSeconds(3), true), (options.Configuration, options.Timeout, options.DedicatedIoThreads));
        var checks = provider.GetRequiredService<Microsoft.Extensions.Options.IOptions<Microsoft.Extensions.Diagnostics.HealthChecks.HealthCheckServiceOptions>>().Value.Registrations;
        Assert.Single(checks, c => c.Name == "redis-warmup");
    }

    private static async Task<bool> IsRefusedAsync(int port)
    {
        try
        {
            using var client = new System.Net.Sockets.TcpClient();
            await client.ConnectAsync(IPAddress.Loopback, port);
            return false;
        }
        catch (System.Net.Sockets.SocketException ex) when (ex.SocketErrorCode == System.Net.Sockets.SocketError.ConnectionRefused)
        {
            return true;
        }
    }

    private sealed record Probe(bool Connected, bool Warm, long Count);
}
