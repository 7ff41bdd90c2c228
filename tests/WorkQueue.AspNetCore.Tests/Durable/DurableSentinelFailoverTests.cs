using System.Diagnostics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// A durable queue connected through Sentinel (<see cref="RedisSentinel"/>, <c>serviceName=</c>) when its primary is
/// SIGKILLed and Sentinel promotes the replica: the store follows the new primary, jobs enqueued after the failover run,
/// nothing is left pending, and readiness says what happened meanwhile. Each test starts its own servers: a kill is
/// destructive.
/// </summary>
public sealed class DurableSentinelFailoverTests(ITestOutputHelper output)
{
    private const string Readiness = "workqueue-durable-" + DurableTestHost.Queue;

    [Fact]
    public async Task Store_PrimaryKilled_FollowsThePromotedReplica_JobsEnqueuedAfterRun_NothingLeftPending()
    {
        await using var sentinel = await RedisSentinel.StartAsync();
        var log = new JobLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var host = await DurableTestHost.StartAsync(sentinel.Primary, log, prefix, connection: sentinel.Configuration);
        for (int n = 0; n < 10; n++)
        {
            await host.Producer.EnqueueAsync(new TestJob(n));
        }

        await log.WaitUntilAsync(() => log.Completed == 10, "the jobs enqueued before the failover");

        var clock = Stopwatch.StartNew();
        var promoted = await sentinel.KillPrimaryAndWaitForPromotionAsync();
        output.WriteLine($"promoted {clock.ElapsedMilliseconds} ms after the kill");

        for (int n = 10; n < 30; n++)
        {
            await EnqueueOnceAcceptedAsync(host, n);
        }

        output.WriteLine($"every enqueue accepted {clock.ElapsedMilliseconds} ms after the kill");
        await log.WaitUntilAsync(() => Enumerable.Range(10, 20).All(n => log.CallsOf(n) >= 1), "the jobs enqueued after the failover", TimeSpan.FromSeconds(60));
        await AssertNothingPendingAsync(promoted, prefix);
    }

    [Fact]
    public async Task Readiness_PrimaryKilled_UnhealthyAndSaysSoUntilTheReplicaIsPromoted_HealthyOnceFollowed()
    {
        await using var sentinel = await RedisSentinel.StartAsync();
        var log = new JobLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var host = await DurableTestHost.StartAsync(sentinel.Primary, log, prefix, connection: sentinel.Configuration);
        await host.Producer.EnqueueAsync(new TestJob(1));
        await log.WaitUntilAsync(() => log.Completed == 1, "the first job");
        var health = host.Services.GetRequiredService<HealthCheckService>();
        Assert.Equal(HealthStatus.Healthy, (await health.CheckHealthAsync(c => c.Name == Readiness)).Status);

        // Killed, not yet replaced: the client sends what it can to the replica, whose reads succeed and writes fail
        // (READONLY). Readiness must say the queue has no primary for as long as that lasts, not turn healthy on a
        // pass that only read.
        var replica = sentinel.Replication.Replica;
        await sentinel.Primary.KillAsync();
        var promotion = sentinel.WaitForPromotionAsync();

        // The client notices the dead primary on its next call; from then until the promotion, readiness stays down.
        await Eventually.HoldsAsync(
            async () => (await health.CheckHealthAsync(c => c.Name == Readiness)).Status == HealthStatus.Unhealthy,
            "readiness to notice the dead primary");
        var descriptions = new List<string>();
        int samples = 0;
        while (true)
        {
            var report = await health.CheckHealthAsync(c => c.Name == Readiness);
            string description = report.Entries[Readiness].Description ?? string.Empty;

            // Read after the sample: a replica still a replica now was one when the sample was taken.
            if (await replica.InfoFieldAsync("replication", "role") != "slave")
            {
                break;
            }

            samples++;
            if (descriptions.Count == 0 || descriptions[^1] != description)
            {
                descriptions.Add(description);
                output.WriteLine($"{report.Status}: {description}");
            }

            Assert.True(report.Status == HealthStatus.Unhealthy, $"Readiness was {report.Status} with no primary: {description}");
            await Task.Delay(20);
        }

        output.WriteLine($"{samples} samples while there was no primary");
        Assert.All(descriptions, d => Assert.Contains("no primary", d, StringComparison.Ordinal));

        var promoted = await promotion;
        await Eventually.HoldsAsync(
            async () => (await health.CheckHealthAsync(c => c.Name == Readiness)).Status == HealthStatus.Healthy,
            "readiness to recover on the promoted replica",
            TimeSpan.FromSeconds(60));
        await EnqueueOnceAcceptedAsync(host, 2);
        await log.WaitUntilAsync(() => log.CallsOf(2) == 1, "the job enqueued after the failover", TimeSpan.FromSeconds(60));
        await AssertNothingPendingAsync(promoted, prefix);
    }

    [Fact]
    public async Task Store_OldPrimaryBackAsAReplica_WritesGoToTheNewPrimary_JobsRun()
    {
        await using var sentinel = await RedisSentinel.StartAsync();
        var log = new JobLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var host = await DurableTestHost.StartAsync(sentinel.Primary, log, prefix, connection: sentinel.Configuration);
        await host.Producer.EnqueueAsync(new TestJob(1));
        await log.WaitUntilAsync(() => log.Completed == 1, "the first job");

        var promoted = await sentinel.KillPrimaryAndWaitForPromotionAsync();
        var demoted = await sentinel.RestartOldPrimaryAsReplicaAsync();
        Assert.Equal("slave", await demoted.InfoFieldAsync("replication", "role"));

        for (int n = 2; n < 12; n++)
        {
            await EnqueueOnceAcceptedAsync(host, n);
        }

        await log.WaitUntilAsync(() => Enumerable.Range(2, 10).All(n => log.CallsOf(n) >= 1), "the jobs enqueued with the old primary back as a replica", TimeSpan.FromSeconds(60));
        await AssertNothingPendingAsync(promoted, prefix);
    }

    [Fact]
    public async Task Store_PrimaryDemotedWhileConnected_ReadOnlyWritesGoToTheNewPrimary_HeldJobsSettle()
    {
        // A failover with the old primary alive (SENTINEL FAILOVER): its connections stay open and its writes answer
        // READONLY once Sentinel makes it a replica. Jobs held across the switch settle on the new primary.
        await using var sentinel = await RedisSentinel.StartAsync();
        var log = new JobLog();
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        log.Behavior = async (job, _, _) =>
        {
            if (job.N < 4)
            {
                await gate.Task;
            }
        };
        string prefix = DurableTestHost.NewPrefix();
        await using var host = await DurableTestHost.StartAsync(sentinel.Primary, log, prefix, configure: o => o.MaxConcurrency = 8, connection: sentinel.Configuration);
        for (int n = 0; n < 4; n++)
        {
            await host.Producer.EnqueueAsync(new TestJob(n));
        }

        await log.WaitUntilAsync(() => log.Runs.Count == 4, "the held jobs to start");
        await sentinel.Primary.CommandAsync("WAIT", "1", "10000");

        var promoted = await sentinel.FailoverAsync();
        gate.SetResult();
        for (int n = 4; n < 14; n++)
        {
            await EnqueueOnceAcceptedAsync(host, n);
        }

        await log.WaitUntilAsync(() => Enumerable.Range(0, 14).All(n => log.CallsOf(n) >= 1) && log.Completed >= 14, "every job", TimeSpan.FromSeconds(60));
        await AssertNothingPendingAsync(promoted, prefix);
    }

    [Fact]
    public async Task Store_PromotedReplicaLacksTheGroup_NoGroupMakesItAgain_JobsRunAndNothingIsLeftPending()
    {
        // The group was created after the last write the replica had (here: destroyed on the replica by hand), so the
        // promoted replica answers NOGROUP to the consumer's reads and acknowledgements.
        await using var sentinel = await RedisSentinel.StartAsync();
        var log = new JobLog();
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        log.Behavior = async (job, _, _) =>
        {
            if (job.N < 3)
            {
                await gate.Task;
            }
        };
        string prefix = DurableTestHost.NewPrefix();
        string stream = DurableTestHost.StreamKey(prefix);
        await using var host = await DurableTestHost.StartAsync(sentinel.Primary, log, prefix, configure: o => o.MaxConcurrency = 8, connection: sentinel.Configuration);
        for (int n = 0; n < 3; n++)
        {
            await host.Producer.EnqueueAsync(new TestJob(n));
        }

        await log.WaitUntilAsync(() => log.Runs.Count == 3, "the held jobs to start");
        await sentinel.Primary.CommandAsync("WAIT", "1", "10000");
        var replica = sentinel.Replication.Replica;
        await replica.CommandAsync("CONFIG", "SET", "replica-read-only", "no");
        await replica.CommandAsync("XGROUP", "DESTROY", stream, "workers");

        var promoted = await sentinel.KillPrimaryAndWaitForPromotionAsync();
        gate.SetResult();
        for (int n = 3; n < 13; n++)
        {
            await EnqueueOnceAcceptedAsync(host, n);
        }

        await log.WaitUntilAsync(() => Enumerable.Range(0, 13).All(n => log.CallsOf(n) >= 1) && log.Completed >= 13, "every job", TimeSpan.FromSeconds(60));
        await AssertNothingPendingAsync(promoted, prefix);
        var health = host.Services.GetRequiredService<HealthCheckService>();
        await Eventually.HoldsAsync(
            async () => (await health.CheckHealthAsync(c => c.Name == Readiness)).Status == HealthStatus.Healthy,
            "readiness once the group is made again");
    }

    [Fact]
    public async Task Store_ConnectionsResetMidLoad_EveryJobRuns_NothingIsLeftPending()
    {
        await using var sentinel = await RedisSentinel.StartAsync();
        var log = new JobLog();
        log.Behavior = static (_, _, ct) => new ValueTask(Task.Delay(5, ct));
        string prefix = DurableTestHost.NewPrefix();
        await using var host = await DurableTestHost.StartAsync(sentinel.Primary, log, prefix, connection: sentinel.Configuration);
        const int Jobs = 300;
        var producing = Task.Run(async () =>
        {
            for (int n = 0; n < Jobs; n++)
            {
                await EnqueueOnceAcceptedAsync(host, n);
            }
        });

        // Every client connection to the primary is reset, several times while jobs are enqueued, fetched and settled.
        for (int i = 0; i < 5; i++)
        {
            await log.WaitUntilAsync(() => log.Runs.Count >= (i + 1) * 40, $"jobs to run before reset {i + 1}", TimeSpan.FromSeconds(60));
            output.WriteLine($"reset {i + 1}: killed {await sentinel.Primary.CommandAsync("CLIENT", "KILL", "TYPE", "normal")} connection(s)");
        }

        await producing.WaitAsync(TimeSpan.FromSeconds(120));
        await log.WaitUntilAsync(() => Enumerable.Range(0, Jobs).All(n => log.CallsOf(n) >= 1), "every job", TimeSpan.FromSeconds(60));
        await AssertNothingPendingAsync(sentinel.Primary, prefix);
    }

    /// <summary>
    /// Enqueues job <paramref name="n"/>, trying again while the queue refuses it as unreachable (no primary yet, or the
    /// client not yet switched) or cannot tell whether Redis stored it (a reply lost with its connection; a job sent
    /// again may run twice, as at-least-once allows): what is asserted is that the queue accepts and runs jobs.
    /// </summary>
    internal static async Task EnqueueOnceAcceptedAsync(DurableTestHost host, int n, TimeSpan? timeout = null)
    {
        var deadline = DateTime.UtcNow + (timeout ?? TimeSpan.FromSeconds(60));
        while (true)
        {
            try
            {
                await host.Producer.EnqueueAsync(new TestJob(n));
                return;
            }
            catch (Exception ex) when (ex is JobRejectedException { Reason: RejectionReason.StoreUnavailable } or EnqueueOutcomeUnknownException && DateTime.UtcNow < deadline)
            {
                await Task.Delay(100);
            }
        }
    }

    /// <summary>Nothing is left in the group's pending entries list on <paramref name="primary"/> (every job settled).</summary>
    internal static async Task AssertNothingPendingAsync(RedisServer primary, string prefix)
    {
        await using var direct = await DurableTestHost.ConnectAsync(primary);
        var db = direct.GetDatabase();
        await Eventually.HoldsAsync(
            async () => (await db.StreamPendingAsync(DurableTestHost.StreamKey(prefix), "workers")).PendingMessageCount == 0,
            "no entry left pending after the failover",
            TimeSpan.FromSeconds(60));
    }
}
