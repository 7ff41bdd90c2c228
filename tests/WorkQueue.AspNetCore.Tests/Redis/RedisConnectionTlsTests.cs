using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Testing;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Redis;

/// <summary>
/// The shared connection over TLS to a real redis-server (Debian's has TLS built in) whose certificate a private CA made
/// by the test signed: a durable queue runs there as the least-privilege user, with the startup checks on Fail.
/// </summary>
public sealed class RedisConnectionTlsTests
{
    [Fact]
    public async Task DurableQueue_OverTlsTrustingAPrivateCa_AsTheLeastPrivilegeUser_EnqueuesAndRunsJobs()
    {
        var files = Directory.CreateTempSubdirectory("workqueue-tls-");
        try
        {
            using var certificates = TestCertificates.Create(files.FullName);
            int tlsPort = RedisServer.FreePort();

            // The plain port stays open for the fixture's readiness PING and the test's own look; the queue uses TLS only.
            await using var server = await SafeRedisServer.StartAsync(certificates.ServerArguments(tlsPort));
            await using var admin = await DurableTestHost.ConnectAsync(server.Redis);
            string prefix = DurableTestHost.NewPrefix();
            string user = "tls" + Guid.NewGuid().ToString("N")[..8];
            await admin.GetServer(admin.GetEndPoints()[0]).ExecuteAsync("ACL", ["SETUSER", user, "reset", "on", ">secret", .. DurableAcl.Rules(prefix).Split(' ')]);

            // Without trusting the CA, the server's certificate is refused: the connection is TLS, and checked.
            await Assert.ThrowsAsync<RedisConnectionException>(() => ConnectionMultiplexer.ConnectAsync($"127.0.0.1:{tlsPort},ssl=true,user={user},password=secret,connectTimeout=3000"));

            var log = new JobLog();
            await using var host = await DurableTestHost.StartAsync(
                server.Redis,
                log,
                prefix,
                configureDurable: d => d.ServerChecks = RedisServerCheckMode.Fail,
                connection: $"127.0.0.1:{tlsPort},ssl=true,user={user},password=secret",
                configureHost: b =>
                {
                    b.Services.AddFakeLogging();
                    b.Services.Configure<RedisWarmupOptions>(o => o.ConfigureRedis = c => c.TrustIssuer(certificates.Authority));
                });

            var ids = await Task.WhenAll(Enumerable.Range(0, 20).Select(async n => await host.Producer.EnqueueAsync(new TestJob(n))));
            var keyed = await host.Producer.EnqueueAsync(new TestJob(20), new JobOptions { IdempotencyKey = "over-tls" });
            await log.WaitUntilAsync(() => log.Completed == 21, "the 21 jobs to run over TLS");
            Assert.All(Enumerable.Range(0, 21), n => Assert.Equal(1, log.CallsOf(n)));
            var done = await Eventually.ValueAsync(() => host.Producer.GetJobAsync(ids[0]), j => j?.State == JobState.Succeeded, "the first job's success recorded");
            Assert.Equal(ids[0], done!.Id);
            Assert.True(keyed.Created);
            Assert.True(host.Control.GetSnapshot().Durable!.IsConnected);
            Assert.DoesNotContain(host.Services.GetFakeLogCollector().GetSnapshot(), r => r.Id.Name is "DurableAccessDenied" or "DurableCommandRefused" or "DurableServerChecksSkipped" or "DurableServerRisk");
        }
        finally
        {
            files.Delete(recursive: true);
        }
    }
}
