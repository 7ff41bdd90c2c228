using System.Collections.Concurrent;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Testing;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// The least-privilege Redis user of docs/durable.md (<see cref="DurableAcl"/>), on real redis-servers: a durable queue
/// does everything it can do through exactly that user and Redis refuses it nothing (its ACL log stays empty); a user
/// without a command it needs is told, at startup or at first use, which command and which rules to add.
/// </summary>
public sealed class DurableAclTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const string Password = "secret";

    [Fact]
    public async Task DurableQueue_UserWithExactlyTheDocumentedAcl_EveryFeatureWorks_AndRedisRefusesNothing()
    {
        await using var server = await SafeRedisServer.StartAsync();
        await using var admin = await DurableTestHost.ConnectAsync(server.Redis);
        string prefix = DurableTestHost.NewPrefix();
        string user = await CreateUserAsync(admin, DurableAcl.Rules(prefix));
        await Admin(admin).ExecuteAsync("ACL", "LOG", "RESET");

        var log = new JobLog
        {
            Behavior = async (job, call, token) =>
            {
                switch (job.N)
                {
                    case 100:
                        // Runs until cancelled by id.
                        await Task.Delay(Timeout.Infinite, token);
                        break;
                    case 200 when call == 1:
                    case 201:
                        throw new InvalidOperationException("boom");
                }
            },
        };
        var ticks = new ConcurrentQueue<RecurringOccurrence>();

        // ServerChecks Fail: the startup checks must find nothing refused (nor any risk on this server) to start at all.
        await using var host = await StartHostAsync(server.Redis, user, prefix, log, ticks);
        var jobs = new TestJobQueue(host.Services.GetRequiredKeyedService<IWorkQueue>("jobs"));
        var store = host.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single(q => q.Store.QueueName == "jobs").Store;

        // Enqueue, an idempotency key, scheduled jobs (one runs, one is cancelled before it is due).
        string plain = await jobs.EnqueueAsync(new TestJob(1));
        var keyed = await jobs.EnqueueAsync(new TestJob(2), new JobOptions { IdempotencyKey = "key-2" });
        Assert.False((await jobs.EnqueueAsync(new TestJob(2), new JobOptions { IdempotencyKey = "key-2" })).Created);
        await jobs.ScheduleAsync(new TestJob(3), TimeSpan.FromMilliseconds(200));
        string later = await jobs.ScheduleAsync(new TestJob(4), TimeSpan.FromHours(1));
        Assert.True(await jobs.CancelScheduledAsync(later));
        await ShowingRefusalsAsync(admin, () => log.WaitUntilAsync(() => log.CallsOf(1) == 1 && log.CallsOf(2) == 1 && log.CallsOf(3) == 1, "jobs 1-3 to run"));

        // Status and search.
        var done = await Eventually.ValueAsync(() => jobs.GetJobAsync(plain), j => j?.State == JobState.Succeeded, "job 1's success recorded");
        Assert.Equal(plain, done!.Id);
        Assert.Contains(keyed.JobId, (await jobs.FindJobsAsync(new JobQuery { States = [JobState.Succeeded] })).Jobs.Select(j => j.Id));

        // A cancel by id reaches the running job over the cancel channel.
        string running = await jobs.EnqueueAsync(new TestJob(100));
        await log.WaitUntilAsync(() => log.CallsOf(100) == 1, "job 100 to start");
        Assert.Equal(JobCancelOutcome.CancelRequested, (await jobs.CancelAsync(running)).Outcome);
        await Eventually.ValueAsync(() => jobs.GetJobAsync(running), j => j?.State == JobState.Canceled, "job 100 to end cancelled");

        // Dead letters: listed, one requeued (and run again), one deleted.
        string failing = await jobs.EnqueueAsync(new TestJob(200));
        await jobs.EnqueueAsync(new TestJob(201));
        var dead = await Eventually.ValueAsync(async () => await store.Jobs.ReadDeadLettersAsync(10), d => d.Count == 2, "jobs 200 and 201 dead-lettered");
        Assert.NotNull((await store.Jobs.RequeueDeadLetterAsync(dead.Single(d => d.JobId == failing).Id)).NewId);
        await log.WaitUntilAsync(() => log.CallsOf(200) == 2, "job 200 to run again once requeued");
        Assert.True(await store.Jobs.DeleteDeadLetterAsync(dead.Single(d => d.JobId != failing).Id));

        // Recurring jobs: occurrences, a pause and a resume (their shared state), a manual trigger.
        var recurring = host.Services.GetRequiredService<IRecurringJobs>();
        await Wait.UntilAsync(() => !ticks.IsEmpty, "an occurrence of the recurring job");
        Assert.True(recurring.Pause("tick"));
        await Eventually.HoldsAsync(async () => await admin.GetDatabase().HashExistsAsync($"{prefix}:{{ticks}}:recurring", "~tick"), "the pause stored");
        Assert.True(recurring.Resume("tick"));
        await Eventually.HoldsAsync(async () => !await admin.GetDatabase().HashExistsAsync($"{prefix}:{{ticks}}:recurring", "~tick"), "the resume stored");
        Assert.NotNull(await recurring.TriggerNowAsync("tick"));
        await Wait.UntilAsync(() => ticks.Any(t => t.IsTriggeredManually), "the manual trigger to run");

        // The queue's figures (stats.lua), as the dashboard and the metrics read them.
        var control = host.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single(q => q.Name == "jobs");
        await Eventually.HoldsAsync(() => Task.FromResult(control.GetSnapshot().Durable?.ReadAt is not null), "the queue's figures read");
        Assert.Null(control.GetSnapshot().Durable!.LastError);

        await host.Host.StopAsync(TimeSpan.FromSeconds(10));

        // Nothing the queues, their scripts or StackExchange.Redis sent was refused, stop included, but the CONFIG GET
        // the client sends at connect (left out on purpose: it would show the server's passwords; the client goes on).
        var refused = ((RedisResult[])(await Admin(admin).ExecuteAsync("ACL", "LOG"))!).Where(e => !Describe(e).Contains("object=config|get ", StringComparison.Ordinal)).ToArray();
        Assert.True(refused.Length == 0, "Redis refused the documented user: " + string.Join("; ", refused.Select(Describe)));
        Assert.DoesNotContain(host.Services.GetFakeLogCollector().GetSnapshot(), r => r.Id.Name is "DurableAccessDenied" or "DurableCommandRefused" or "DurableServerChecksSkipped" or "DurableServerRisk" or "DurableRedisFailed" or "DurableSubscribeFailed");
    }

    [Theory]
    [InlineData("-xautoclaim", "XAUTOCLAIM", "+xautoclaim")]
    [InlineData("-xreadgroup", "XREADGROUP", "+xreadgroup")]
    [InlineData("-xgroup|create", "XGROUP CREATE", "+xgroup|create")]
    [InlineData("resetchannels", "PUBLISH", "&{prefix}:*")]
    [InlineData("resetkeys ~other:*", "the queue's keys", "~{prefix}:*")]
    [InlineData("-evalsha", "EVALSHA", "+evalsha")]
    public async Task StartAsync_UserMissingWhatTheQueueNeeds_ServerChecksFail_FailsNamingItAndTheAclToAdd(string rule, string named, string toAdd)
    {
        await using var server = await SafeRedisServer.StartAsync();
        await using var admin = await DurableTestHost.ConnectAsync(server.Redis);
        string prefix = DurableTestHost.NewPrefix();
        string user = await CreateUserAsync(admin, DurableAcl.Rules(prefix) + " " + rule);
        using var host = DurableTestHost.Build(
            server.Redis,
            new JobLog(),
            prefix,
            configureDurable: d => d.ServerChecks = RedisServerCheckMode.Fail,
            connection: $"{server.Redis.Configuration},user={user},password={Password}",
            configureHost: b => b.Services.AddFakeLogging());

        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => host.StartAsync());

        toAdd = toAdd.Replace("{prefix}", prefix, StringComparison.Ordinal);
        Assert.Contains(named, error.Message, StringComparison.Ordinal);
        Assert.Contains($"ACL SETUSER {user} ", error.Message, StringComparison.Ordinal);
        Assert.Contains(toAdd, error.Message, StringComparison.Ordinal);
        Assert.Contains(DurableAcl.Rules(prefix), error.Message, StringComparison.Ordinal);
        var denied = Assert.Single(host.Services.GetFakeLogCollector().GetSnapshot(), r => r.Id.Name == "DurableAccessDenied");
        Assert.Equal((LogLevel.Error, 522), (denied.Level, denied.Id.Id));
        Assert.Contains(named, denied.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task StartAsync_UserMissingACommand_ServerChecksWarn_LogsTheRefusalAndStarts()
    {
        await using var server = await SafeRedisServer.StartAsync();
        await using var admin = await DurableTestHost.ConnectAsync(server.Redis);
        string prefix = DurableTestHost.NewPrefix();
        string user = await CreateUserAsync(admin, DurableAcl.Rules(prefix) + " -xclaim");
        await using var host = await DurableTestHost.StartAsync(
            server.Redis,
            new JobLog(),
            prefix,
            connection: $"{server.Redis.Configuration},user={user},password={Password}",
            configureHost: b => b.Services.AddFakeLogging());

        var denied = Assert.Single(host.Services.GetFakeLogCollector().GetSnapshot(), r => r.Id.Name == "DurableAccessDenied");
        Assert.Equal(LogLevel.Error, denied.Level);
        Assert.Contains($"Redis user '{user}' may not run XCLAIM. Add it: ACL SETUSER {user} +xclaim.", denied.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(RedisServerCheckMode.Warn)]
    [InlineData(RedisServerCheckMode.Off)]
    public async Task StartAsync_GroupCreationRefused_ServerChecksNotFail_TheWarmupFailureNamesTheCommandAndTheAcl(RedisServerCheckMode checks)
    {
        await using var server = await SafeRedisServer.StartAsync();
        await using var admin = await DurableTestHost.ConnectAsync(server.Redis);
        string prefix = DurableTestHost.NewPrefix();
        string user = await CreateUserAsync(admin, DurableAcl.Rules(prefix) + " -xgroup|create");
        using var host = DurableTestHost.Build(
            server.Redis,
            new JobLog(),
            prefix,
            configureDurable: d => d.ServerChecks = checks,
            connection: $"{server.Redis.Configuration},user={user},password={Password}");

        // The checks do not fail the start (Warn logs, Off does not look), but the warm-up's group step must have its
        // group: the start fails there, and says what to add rather than Redis's bare refusal.
        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => host.StartAsync());

        Assert.Contains("consumer group could not be created", error.Message, StringComparison.Ordinal);
        Assert.Contains($"may not run XGROUP CREATE. Add it: ACL SETUSER {user} +xgroup|create.", error.Message, StringComparison.Ordinal);
        Assert.Contains(DurableAcl.Rules(prefix), error.Message, StringComparison.Ordinal);
        await host.StopAsync();
    }

    [Fact]
    public async Task FirstUse_AcknowledgementRefusedAfterStart_ReadinessAndLogNameTheCommandAndTheAcl_NotABareNoperm()
    {
        var log = new JobLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var admin = await DurableTestHost.ConnectAsync(redis.Server);
        string user = await CreateUserAsync(admin, DurableAcl.Rules(prefix));
        await using var host = await DurableTestHost.StartAsync(
            redis.Server,
            log,
            prefix,
            configureDurable: d => d.ServerChecks = RedisServerCheckMode.Off,
            connection: $"{redis.Server.Configuration},user={user},password={Password}",
            configureHost: b => b.Services.AddFakeLogging());
        await Admin(admin).ExecuteAsync("ACL", "SETUSER", user, "-xack");

        await host.Producer.EnqueueAsync(new TestJob(1));
        await log.WaitUntilAsync(() => log.Completed == 1, "job 1 to run");
        string error = (await Eventually.ValueAsync(() => ValueTask.FromResult(host.Control.GetSnapshot().Durable!.LastError), e => e is not null, "the refusal in readiness"))!;

        Assert.Contains($"Redis user '{user}' may not run XACK. Add it: ACL SETUSER {user} +xack.", error, StringComparison.Ordinal);
        Assert.Contains(DurableAcl.Rules(prefix), error, StringComparison.Ordinal);
        var refused = Assert.Single(host.Services.GetFakeLogCollector().GetSnapshot(), r => r.Id.Name == "DurableCommandRefused");
        Assert.Equal((LogLevel.Error, 517), (refused.Level, refused.Id.Id));
        Assert.Contains("+xack", refused.Message, StringComparison.Ordinal);

        await Admin(admin).ExecuteAsync("ACL", "SETUSER", user, "+xack");
        await Eventually.HoldsAsync(async () => await admin.GetDatabase().StreamLengthAsync(DurableTestHost.StreamKey(prefix)) == 0, "the acknowledgement to land once allowed");
    }

    [Fact]
    public async Task FirstUse_EnqueueRefused_TheProducerIsToldTheCommandAndTheAcl()
    {
        string prefix = DurableTestHost.NewPrefix();
        await using var admin = await DurableTestHost.ConnectAsync(redis.Server);
        string user = await CreateUserAsync(admin, DurableAcl.Rules(prefix));
        await using var host = await DurableTestHost.StartAsync(
            redis.Server,
            new JobLog(),
            prefix,
            configureDurable: d => d.ServerChecks = RedisServerCheckMode.Off,
            connection: $"{redis.Server.Configuration},user={user},password={Password}");
        await Admin(admin).ExecuteAsync("ACL", "SETUSER", user, "-xadd");

        var rejected = await Assert.ThrowsAsync<JobRejectedException>(async () => await host.Producer.EnqueueAsync(new TestJob(1)));

        Assert.Equal(RejectionReason.StoreUnavailable, rejected.Reason);
        Assert.Contains("did not take the job", rejected.Message, StringComparison.Ordinal);
        Assert.Contains($"may not run XADD. Add it: ACL SETUSER {user} +xadd.", rejected.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Docs_RunningOnProductionRedis_GiveTheAclTheCodeChecks()
    {
        var root = new DirectoryInfo(AppContext.BaseDirectory);
        while (root is not null && !File.Exists(Path.Combine(root.FullName, "WorkQueue.sln")))
        {
            root = root.Parent;
        }

        Assert.NotNull(root);
        string docs = File.ReadAllText(Path.Combine(root.FullName, "docs", "durable.md"));
        Assert.Contains($"ACL SETUSER workqueue on >{{password}} {DurableAcl.Rules("workqueue")}\n", docs.ReplaceLineEndings("\n"), StringComparison.Ordinal);
    }

    /// <summary>Creates a user with a password and exactly <paramref name="rules"/> (split at spaces, as <c>ACL SETUSER</c> takes them).</summary>
    private static async Task<string> CreateUserAsync(ConnectionMultiplexer admin, string rules)
    {
        string user = "wq" + Guid.NewGuid().ToString("N")[..8];
        await Admin(admin).ExecuteAsync("ACL", ["SETUSER", user, "reset", "on", ">" + Password, .. rules.Split(' ')]);
        return user;
    }

    /// <summary>Runs <paramref name="step"/>; when it fails, fails with what Redis's ACL log holds, which says what the user was refused.</summary>
    private static async Task ShowingRefusalsAsync(ConnectionMultiplexer admin, Func<Task> step)
    {
        try
        {
            await step();
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            var refused = (RedisResult[])(await Admin(admin).ExecuteAsync("ACL", "LOG"))!;
            Assert.Fail($"{ex.Message} Redis's ACL log: {string.Join("; ", refused.Select(Describe))}");
        }
    }

    private static IServer Admin(ConnectionMultiplexer admin) => admin.GetServer(admin.GetEndPoints()[0]);

    private static string Describe(RedisResult entry)
    {
        var fields = (RedisResult[])entry!;
        return string.Join(" ", Enumerable.Range(0, fields.Length / 2).Select(i => $"{fields[2 * i]}={fields[(2 * i) + 1]}"));
    }

    /// <summary>Two durable queues (jobs, and a recurring job's occurrences) connected as <paramref name="user"/>.</summary>
    private static Task<DurableTestHost> StartHostAsync(RedisServer redis, string user, string prefix, JobLog log, ConcurrentQueue<RecurringOccurrence> ticks)
    {
        // Short claims, so that heartbeats and reclaims (XCLAIM, XAUTOCLAIM) run within the test too.
        var durable = DurableTestHost.Durable(prefix, d =>
        {
            d.HeartbeatInterval = TimeSpan.FromMilliseconds(300);
            d.ClaimTimeout = TimeSpan.FromSeconds(4);
            d.ServerChecks = RedisServerCheckMode.Fail;
        });
        return DurableTestHost.StartAsync(
            $"{redis.Configuration},user={user},password={Password},syncTimeout=3000,asyncTimeout=3000",
            "a",
            workQueue => workQueue
                .AddDurableQueue<TestJobHandler, TestJob>(
                    "jobs",
                    o =>
                    {
                        o.Retry.MaxAttempts = 1;

                        // A key stays held after its job succeeded (the repeat below may come after job 2 ran).
                        o.IdempotencyKeyRetention = TimeSpan.FromMinutes(1);
                    },
                    durable)
                .AddDurableQueue<TickHandler, RecurringOccurrence>("ticks", configureDurable: durable)
                .AddRecurringJob<TickHandler>("tick", "* * * * * *", o => o.Queue = "ticks"),
            b => b.Services.AddFakeLogging().AddSingleton(log).AddSingleton(ticks));
    }

    public sealed class TickHandler(ConcurrentQueue<RecurringOccurrence> ticks) : IJobHandler<RecurringOccurrence>
    {
        public ValueTask ExecuteAsync(RecurringOccurrence payload, CancellationToken cancellationToken)
        {
            ticks.Enqueue(payload);
            return ValueTask.CompletedTask;
        }
    }
}
