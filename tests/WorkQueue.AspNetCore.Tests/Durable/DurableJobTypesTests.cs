using System.Collections.Concurrent;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Several job types on one durable queue, on a real redis-server: each stored job names its type (the default type
/// bare, as 0.2 wrote it), runs with its own handler, and keeps its type's name through status, records and search.
/// </summary>
public sealed class DurableJobTypesTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task EnqueueAsync_SecondJobTypeOnOneQueue_RunsItsHandlerAndKeepsItsName()
    {
        var log = new JobLog();
        var others = new OtherLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var producer = await StartAsync(log, others, prefix, "p", consume: false);
        var queue = QueueOf(producer);
        string plain = await producer.Producer.EnqueueAsync(new TestJob(1));
        string other = (await queue.EnqueueAsync<OtherJobHandler, OtherJob>(new OtherJob("x"), new JobOptions())).JobId;
        string failing = (await queue.EnqueueAsync<OtherJobHandler, OtherJob>(new OtherJob("fail"), new JobOptions())).JobId;

        // The default type is stored bare (as 0.2 wrote it); another names its type before its JSON.
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var entries = await client.GetDatabase().StreamRangeAsync(FindStore(producer).Keys.Stream);
        Assert.StartsWith("{", (string?)entries.Single(e => e.Id == plain)["p"]);
        Assert.Equal("other-job\u001f{\"text\":\"x\"}", (string?)entries.Single(e => e.Id == other)["p"]);
        Assert.Equal(nameof(TestJobHandler), (await queue.GetJobAsync(plain))!.Name);
        Assert.Equal("other-job", (await queue.GetJobAsync(other))!.Name);
        var queued = await queue.FindJobsAsync(new JobQuery { NameContains = "OTHER", States = [JobState.Queued] });
        Assert.Equal([failing, other], queued.Jobs.Select(j => j.Id));

        await using var consumer = await StartAsync(log, others, prefix, "c", consume: true);
        await log.WaitUntilAsync(() => log.Completed == 1, "the default type's job to run");
        var succeeded = await Eventually.ValueAsync(() => queue.GetJobAsync(other), j => j?.State == JobState.Succeeded, "the other type's job to succeed");
        Assert.Equal("other-job", succeeded!.Name);
        var dead = await Eventually.ValueAsync(() => queue.GetJobAsync(failing), j => j?.State == JobState.DeadLettered, "the failing job to be dead-lettered");
        Assert.Equal("other-job", dead!.Name);
        Assert.Equal(["x"], others.Runs.Where(r => r != "fail").Distinct());
        Assert.Single(log.Runs);

        // Ended records keep the type: a search by type finds the other type's jobs only, the default type's by its name.
        var ended = await queue.FindJobsAsync(new JobQuery { NameContains = "other-job", States = [JobState.Succeeded, JobState.DeadLettered] });
        Assert.Equal(new[] { other, failing }.Order(StringComparer.Ordinal), ended.Jobs.Select(j => j.Id).Order(StringComparer.Ordinal));
        var defaults = await queue.FindJobsAsync(new JobQuery { NameContains = "testjobhandler" });
        Assert.Equal([plain], defaults.Jobs.Select(j => j.Id));
        var deadLetter = Assert.Single(await FindStore(producer).Jobs.ReadDeadLettersAsync(10));
        Assert.Equal("other-job", deadLetter.Name);
    }

    [Fact]
    public async Task CancelAsync_QueuedJobOfSecondType_RecordKeepsItsName()
    {
        var log = new JobLog();
        var others = new OtherLog();
        await using var producer = await StartAsync(log, others, DurableTestHost.NewPrefix(), "p", consume: false);
        var queue = QueueOf(producer);
        string queued = (await queue.EnqueueAsync<OtherJobHandler, OtherJob>(new OtherJob("q"), new JobOptions())).JobId;
        string scheduled = await queue.ScheduleAsync<OtherJobHandler, OtherJob>(new OtherJob("s"), TimeSpan.FromHours(1));

        Assert.Equal("other-job", (await queue.GetJobAsync(scheduled))!.Name);
        Assert.Equal(JobCancelOutcome.Canceled, (await queue.CancelAsync(queued)).Outcome);
        Assert.Equal(JobCancelOutcome.Canceled, (await queue.CancelAsync(scheduled)).Outcome);
        Assert.Equal(("other-job", JobState.Canceled), ((await queue.GetJobAsync(queued))!.Name, (await queue.GetJobAsync(queued))!.State));
        Assert.Equal(("other-job", JobState.Canceled), ((await queue.GetJobAsync(scheduled))!.Name, (await queue.GetJobAsync(scheduled))!.State));
        Assert.Equal(2, (await queue.FindJobsAsync(new JobQuery { NameContains = "other", States = [JobState.Canceled] })).Jobs.Count);
        Assert.Empty((await queue.FindJobsAsync(new JobQuery { NameContains = "TestJob", States = [JobState.Canceled] })).Jobs);
    }

    [Fact]
    public async Task AddRecurringJob_JobTypeOnSharedQueue_OccurrencesRunWithTheirHandler()
    {
        // A recurring job needs no queue of its own: its handler's job type rides the queue's stream like any other.
        var ticks = new DurableRecurringTests.OccurrenceLog();
        await using var host = await DurableTestHost.StartAsync(
            redis.Server.Configuration,
            "a",
            workQueue => workQueue
                .AddDurableQueue<TestJobHandler, TestJob>(DurableTestHost.Queue, configureDurable: d => d.KeyPrefix = DurableTestHost.NewPrefix())
                .AddJobType<DurableRecurringTests.TickHandler, RecurringOccurrence>("tick")
                .AddRecurringJob<DurableRecurringTests.TickHandler>("every-second", "* * * * * *", o => o.Queue = DurableTestHost.Queue),
            b => b.Services.AddSingleton(new JobLog()).AddSingleton(ticks));
        await ticks.WaitUntilAsync(runs => runs.Count >= 2, "two occurrences to run");
        var page = await host.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single().Queue
            .FindJobsAsync(new JobQuery { NameContains = "tick", States = [JobState.Succeeded] });
        Assert.NotEmpty(page.Jobs);
        Assert.All(page.Jobs, j => Assert.Equal("tick", j.Name));
    }

    [Fact]
    public async Task RollingDeploy_OldVersionFetchesNewType_HandsItBackUnrun_NewVersionRunsEveryJob()
    {
        // v1 knows the queue's default type only; v2 adds "other-job". v1 consumes first and fetches every new job.
        var log = new JobLog();
        var others = new OtherLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var v1 = await DurableTestHost.StartAsync(redis.Server, log, prefix, "v1");
        await using var producer = await StartAsync(log, others, prefix, "v2-producer", consume: false);
        var queue = QueueOf(producer);
        var ids = new List<string>();
        for (int i = 0; i < 20; i++)
        {
            ids.Add((await queue.EnqueueAsync<OtherJobHandler, OtherJob>(new OtherJob("job-" + i), new JobOptions())).JobId);
        }

        // Handed back, unrun: each waits for a retry as the same attempt, none dead-lettered.
        await Eventually.ValueAsync(() => queue.FindJobsAsync(new JobQuery { States = [JobState.Retrying] }), p => p.Jobs.Count == 20, "v1 to hand every job back");
        Assert.Empty(others.Runs);

        await using var v2 = await StartAsync(log, others, prefix, "v2", consume: true);
        await Wait.UntilAsync(() => others.Runs.Distinct().Count() == 20, "v2 to run every job");
        foreach (string id in ids)
        {
            var done = await Eventually.ValueAsync(() => queue.GetJobAsync(id), j => j?.State == JobState.Succeeded, $"job {id} to succeed");
            Assert.Equal((1, "other-job"), (done!.Attempt, done.Name));
            Assert.Equal(FindStore(v2).ConsumerName, Assert.Single(done.Attempts).WorkerName);
        }

        Assert.Empty(await FindStore(producer).Jobs.ReadDeadLettersAsync(10));
        Assert.Empty(log.Runs);
    }

    [Fact]
    public async Task UnknownJobType_NoInstanceRunsIt_DeadLetteredAfterTheTimeoutSayingSo()
    {
        var log = new JobLog();
        var others = new OtherLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var v1 = await DurableTestHost.StartAsync(redis.Server, log, prefix, "v1", configureDurable: d =>
        {
            d.HeartbeatInterval = TimeSpan.FromMilliseconds(500);
            d.UnknownJobTypeTimeout = TimeSpan.FromSeconds(2);
        });
        await using var producer = await StartAsync(log, others, prefix, "v2-producer", consume: false);
        var queue = QueueOf(producer);
        string id = (await queue.EnqueueAsync<OtherJobHandler, OtherJob>(new OtherJob("orphan"), new JobOptions())).JobId;

        var dead = await Eventually.ValueAsync(() => queue.GetJobAsync(id), j => j?.State == JobState.DeadLettered, "the orphan job to be dead-lettered");
        Assert.Equal("other-job", dead!.Name);
        var letter = Assert.Single(await FindStore(producer).Jobs.ReadDeadLettersAsync(10));
        Assert.Equal(("unknown-job-type", "other-job"), (letter.Reason, letter.Name));
        Assert.Contains("'other-job'", letter.ErrorMessage);
        Assert.Contains("AddJobType", letter.ErrorMessage);
        Assert.Empty(others.Runs);
    }

    [Fact]
    public void DurableQueueOptions_UnknownJobTypeTimeoutUnset_FifteenMinutesOrThreeHeartbeatsAndAlwaysValid()
    {
        var validator = new DurableQueueOptionsRulesValidator();
        var usual = new DurableQueueOptions();
        var slow = new DurableQueueOptions { HeartbeatInterval = TimeSpan.FromHours(8), ClaimTimeout = TimeSpan.FromDays(1) };
        Assert.Equal((TimeSpan.FromMinutes(15), TimeSpan.FromHours(24)), (usual.UnknownJobTypeTimeoutOrDefault, slow.UnknownJobTypeTimeoutOrDefault));
        Assert.True(validator.Validate("jobs", usual).Succeeded);
        Assert.True(validator.Validate("jobs", slow).Succeeded);
    }

    [Fact]
    public void DurableQueueOptions_UnknownJobTypeTimeoutNotAboveTwoHeartbeats_FailsNamingBoth()
    {
        var result = new DurableQueueOptionsRulesValidator().Validate("jobs", new DurableQueueOptions { HeartbeatInterval = TimeSpan.FromSeconds(5), UnknownJobTypeTimeout = TimeSpan.FromSeconds(10) });
        Assert.True(result.Failed);
        Assert.Contains("UnknownJobTypeTimeout", result.FailureMessage);
        Assert.Contains("HeartbeatInterval", result.FailureMessage);
    }

    [Fact]
    public async Task EnqueueAsync_HandlerWithoutJobType_ThrowsNamingAddJobType()
    {
        await using var host = await DurableTestHost.StartAsync(redis.Server, new JobLog(), DurableTestHost.NewPrefix(), configureDurable: d => d.Consume = false);
        var error = await Assert.ThrowsAsync<InvalidOperationException>(async () => await QueueOf(host).EnqueueAsync<OtherJobHandler, OtherJob>(new OtherJob("x")));
        Assert.Contains("AddJobType<OtherJobHandler, OtherJob>()", error.Message);
        Assert.Contains($"'{DurableTestHost.Queue}'", error.Message);
    }

    [Fact]
    public void AddJobType_NameTakenByAnotherHandler_ThrowsNamingBoth()
    {
        var builder = new ServiceCollection().AddWorkQueue();
        builder.AddJobType<TestJobHandler, TestJob>("shared");
        var error = Assert.Throws<ArgumentException>(() => builder.AddJobType<OtherJobHandler, OtherJob>("shared"));
        Assert.Equal("name", error.ParamName);
        Assert.Contains(nameof(TestJobHandler), error.Message);
        Assert.Contains(nameof(OtherJobHandler), error.Message);
    }

    [Fact]
    public void AddJobType_SameHandlerUnderSecondName_ThrowsNamingTheFirst()
    {
        var builder = new ServiceCollection().AddWorkQueue();
        builder.AddJobType<OtherJobHandler, OtherJob>("first");
        builder.AddJobType<OtherJobHandler, OtherJob>("first");
        var error = Assert.Throws<ArgumentException>(() => builder.AddJobType<OtherJobHandler, OtherJob>("second"));
        Assert.Contains("'first'", error.Message);
    }

    [Theory]
    [InlineData("")]
    [InlineData("with space")]
    [InlineData("pipe|name")]
    [InlineData("unit\u001fsep")]
    [InlineData("é")]
    public void AddJobType_InvalidName_ThrowsNamingName(string name)
    {
        var error = Assert.Throws<ArgumentException>(() => new ServiceCollection().AddWorkQueue().AddJobType<OtherJobHandler, OtherJob>(name));
        Assert.Equal("name", error.ParamName);
    }

    [Fact]
    public void AddJobType_NameOf101Characters_Throws() =>
        Assert.Throws<ArgumentException>(() => new ServiceCollection().AddWorkQueue().AddJobType<OtherJobHandler, OtherJob>(new string('a', 101)));

    [Fact]
    public void AddJobType_GenericHandlerWithoutName_ThrowsAskingForOne()
    {
        var error = Assert.Throws<ArgumentException>(() => new ServiceCollection().AddWorkQueue().AddJobType<GenericHandler<int>, int>());
        Assert.Equal("name", error.ParamName);
        new ServiceCollection().AddWorkQueue().AddJobType<GenericHandler<int>, int>("generic-int");
    }

    private Task<DurableTestHost> StartAsync(JobLog log, OtherLog others, string prefix, string instance, bool consume) =>
        DurableTestHost.StartAsync(
            redis.Server,
            log,
            prefix,
            instance,
            configure: o => o.Retry.MaxAttempts = 1,
            configureDurable: d => d.Consume = consume,
            configureHost: b =>
            {
                b.Services.AddSingleton(others);
                b.Services.AddWorkQueue().AddJobType<OtherJobHandler, OtherJob>("other-job");
            });

    /// <summary>The queue's <see cref="IWorkQueue"/>: the same producer code as for an in-memory queue.</summary>
    private static IWorkQueue QueueOf(DurableTestHost host) =>
        host.Services.GetRequiredKeyedService<IWorkQueue>(DurableTestHost.Queue);

    private static RedisStreamStore FindStore(DurableTestHost host) =>
        host.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single().Store;

    public sealed record OtherJob(string Text);

    public sealed class OtherLog
    {
        private readonly ConcurrentQueue<string> _runs = new();

        public IReadOnlyList<string> Runs => [.. _runs];

        public void Add(string text) => _runs.Enqueue(text);
    }

    public sealed class OtherJobHandler(OtherLog log) : IJobHandler<OtherJob>
    {
        public ValueTask ExecuteAsync(OtherJob payload, CancellationToken cancellationToken)
        {
            log.Add(payload.Text);
            return payload.Text == "fail" ? throw new InvalidOperationException("fails on purpose") : ValueTask.CompletedTask;
        }
    }

    public sealed class GenericHandler<T> : IJobHandler<T>
    {
        public ValueTask ExecuteAsync(T payload, CancellationToken cancellationToken) => ValueTask.CompletedTask;
    }
}
