using System.Collections.Concurrent;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;
using WorkQueue.Core.Tests.TestSupport;
using WorkQueue.Internal;
using WorkQueue.Recurring;

namespace WorkQueue.Core.Tests.Recurring;

/// <summary>Recurring jobs on in-memory queues (<c>AddRecurringJob</c>, <see cref="IRecurringJobs"/>), on a <see cref="FakeTimeProvider"/>.</summary>
public sealed class RecurringJobManagerTests
{
    private static readonly DateTimeOffset Start = new(2026, 11, 25, 1, 59, 30, TimeSpan.Zero);
    private readonly FakeTimeProvider _time = new(Start);
    private readonly Runs _runs = new();

    [Theory]
    [InlineData("* * * * * *", 30 * 3600, "2026-11-25T01:59:30Z")]       // every second, down 30 h (over the old 100,000-step walk)
    [InlineData("*/5 * * * * *", 3 * 86400, "2026-11-25T01:59:30Z")]     // every 5 s, down 3 days
    [InlineData("0 2 * * *", 10 * 86400, "2026-11-24T02:00:00Z")]        // nightly at 02:00, down 10 days
    [InlineData("0 0 1 1 *", 800 * 86400, "2026-01-01T00:00:00Z")]       // yearly, down 800 days
    public void LatestMissed_LongOutage_TheLatestOccurrenceBeforeNow(string cron, int downSeconds, string expected)
    {
        var schedule = RecurringSchedule.Cron(cron, "UTC", "cron");

        var latest = RecurringJobManager.LatestMissed(schedule, Start.AddSeconds(-downSeconds), Start);

        Assert.Equal(DateTimeOffset.Parse(expected, System.Globalization.CultureInfo.InvariantCulture), latest);
    }

    [Fact]
    public void LatestMissed_NoOccurrenceSinceTheLast_Null()
    {
        var nightly = RecurringSchedule.Cron("0 2 * * *", "UTC", "cron");

        Assert.Null(RecurringJobManager.LatestMissed(nightly, Start.AddHours(-23), Start));   // the last was 02:00 yesterday + 30 min
        Assert.Null(RecurringJobManager.LatestMissed(RecurringSchedule.Every(TimeSpan.FromMinutes(10), "interval"), Start.AddSeconds(-20), Start));
    }

    [Fact]
    public async Task AddRecurringJob_Cron_RunsOncePerOccurrenceWithItsScheduledTime()
    {
        await using var harness = StartHost(b => b.AddRecurringJob<Recorder>("every-minute", "* * * * *"));
        var jobs = harness.Services.GetRequiredService<IRecurringJobs>();
        Assert.Equal(Start.AddSeconds(30), Assert.Single(jobs.GetAll()).NextRunAt);

        _time.Advance(TimeSpan.FromSeconds(29));
        Assert.Empty(_runs.Items);
        for (int i = 0; i < 3; i++)
        {
            _time.Advance(TimeSpan.FromMinutes(1));
            await Wait.UntilAsync(() => _runs.Items.Count == i + 1, $"occurrence {i + 1}");
        }

        Assert.Equal([Start.AddSeconds(30), Start.AddSeconds(90), Start.AddSeconds(150)], _runs.Items.Select(o => o.ScheduledFor));
        Assert.All(_runs.Items, o => Assert.Equal(("every-minute", false), (o.RecurringJobId, o.IsTriggeredManually)));
        await Wait.UntilAsync(() => jobs.Find("EVERY-MINUTE")?.LastRun?.Outcome == RecurringRunOutcome.Succeeded, "the latest run's outcome");
        var info = jobs.Find("every-minute")!;
        Assert.Equal((Start.AddSeconds(150), Start.AddSeconds(210)), (info.LastRun!.ScheduledFor, info.NextRunAt));
        Assert.Equal(typeof(Recorder).FullName, info.Handler);
        Assert.Equal(("* * * * *", "UTC", "default"), (info.Schedule, info.TimeZone, info.Queue));
    }

    [Fact]
    public async Task AddRecurringJob_SecondsAndInterval_FallOnTheirMarks()
    {
        await using var harness = StartHost(b => b
            .AddRecurringJob<Recorder>("every-15s", "*/15 * * * * *")
            .AddRecurringJob<Recorder>("every-20s", TimeSpan.FromSeconds(20)));
        // From 01:59:30 to 02:00:30: the 15 s marks 01:59:45, 02:00:00, 02:00:15, 02:00:30; the 20 s marks since the epoch
        // 01:59:40, 02:00:00, 02:00:20. Each step waits for the occurrences it makes before the clock moves on: moved in
        // one burst, a busy machine's manager could see two marks of one job pass at once and run the missed one once.
        int[] runsAfterStep = [1, 2, 4, 4, 6, 7];
        foreach (int expected in runsAfterStep)
        {
            _time.Advance(TimeSpan.FromSeconds(10));
            await Wait.UntilAsync(() => _runs.Items.Count >= expected, $"{expected} occurrences");
        }

        Assert.Equal(7, _runs.Items.Count);
        Assert.Equal(
            [Start.AddSeconds(15), Start.AddSeconds(30), Start.AddSeconds(45), Start.AddSeconds(60)],
            _runs.Items.Where(o => o.RecurringJobId == "every-15s").Select(o => o.ScheduledFor).Order());
        Assert.Equal(
            [Start.AddSeconds(10), Start.AddSeconds(30), Start.AddSeconds(50)],
            _runs.Items.Where(o => o.RecurringJobId == "every-20s").Select(o => o.ScheduledFor).Order());
    }

    [Fact]
    public async Task PauseResumeTriggerRemove_ChangeTheJobAtRuntime()
    {
        await using var harness = StartHost(b => b.AddRecurringJob<Recorder>("close-day", "0 2 * * *"));
        var jobs = harness.Services.GetRequiredService<IRecurringJobs>();

        Assert.True(jobs.Pause("close-day"));
        Assert.Null(jobs.Find("close-day")!.NextRunAt);
        _time.Advance(TimeSpan.FromMinutes(1));

        // Paused through 02:00: that occurrence is not run later either.
        string? id = await jobs.TriggerNowAsync("close-day");
        Assert.NotNull(id);
        await Wait.UntilAsync(() => _runs.Items.Count == 1, "the triggered run");
        Assert.True(_runs.Items.Single().IsTriggeredManually);
        Assert.True(jobs.Resume("close-day"));
        Assert.Equal(new DateTimeOffset(2026, 11, 26, 2, 0, 0, TimeSpan.Zero), jobs.Find("close-day")!.NextRunAt);

        Assert.True(jobs.Remove("close-day"));
        Assert.False(jobs.Remove("close-day"));
        Assert.Null(await jobs.TriggerNowAsync("close-day"));
        Assert.False(jobs.Pause("close-day"));
        _time.Advance(TimeSpan.FromDays(2));
        Assert.Single(_runs.Items);
        Assert.Empty(jobs.GetAll());
    }

    [Fact]
    public async Task AddOrUpdate_SameId_ReplacesTheSchedule()
    {
        await using var harness = StartHost(b => b.AddRecurringJob<Recorder>("job", "0 3 * * *"));
        var jobs = harness.Services.GetRequiredService<IRecurringJobs>();
        jobs.AddOrUpdate<Recorder>("JOB", TimeSpan.FromMinutes(1));

        var info = Assert.Single(jobs.GetAll());
        Assert.Equal(("every 00:01:00", Start.AddSeconds(30)), (info.Schedule, info.NextRunAt));
        _time.Advance(TimeSpan.FromSeconds(30));
        await Wait.UntilAsync(() => _runs.Items.Count == 1, "the replaced job's first run");
    }

    [Fact]
    public async Task FailingOccurrence_LastRunSaysFailedWithTheError()
    {
        _runs.Fail = true;
        await using var harness = StartHost(b => b.AddRecurringJob<Recorder>("fails", "* * * * *"));
        var jobs = harness.Services.GetRequiredService<IRecurringJobs>();
        _time.Advance(TimeSpan.FromSeconds(30));

        await Wait.UntilAsync(() => jobs.Find("fails")!.LastRun?.Outcome == RecurringRunOutcome.Failed, "the failure");
        var run = jobs.Find("fails")!.LastRun!;
        Assert.Contains("occurrence failed", run.Error, StringComparison.Ordinal);
        Assert.NotNull(run.JobId);
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.DeadLettered == 1, "the dead letter");
    }

    [Fact]
    public async Task StopAsync_StopsTheTimersBeforeTheQueuesDrain()
    {
        var harness = StartHost(b => b.AddRecurringJob<Recorder>("job", "* * * * *"));
        await harness.Provider.StopAsync(TimeSpan.FromSeconds(10));

        _time.Advance(TimeSpan.FromMinutes(5));
        Assert.Empty(_runs.Items);
        Assert.Null(harness.Services.GetRequiredService<IRecurringJobs>().Find("job")!.LastRun);
        await harness.DisposeAsync();
    }

    [Theory]
    [InlineData("61 * * * *", "cronExpression")]
    [InlineData("* * *", "cronExpression")]
    [InlineData("", "cronExpression")]
    public void AddRecurringJob_InvalidCron_FailsAtRegistrationNamingIt(string cron, string param)
    {
        var builder = new ServiceCollection().AddWorkQueue();
        var ex = Assert.ThrowsAny<ArgumentException>(() => builder.AddRecurringJob<Recorder>("job", cron));
        Assert.Equal(param, ex.ParamName);
    }

    [Fact]
    public void AddRecurringJob_UnknownTimeZoneOrDuplicateId_FailsAtRegistrationNamingIt()
    {
        var builder = new ServiceCollection().AddWorkQueue();
        var zone = Assert.Throws<ArgumentException>(() => builder.AddRecurringJob<Recorder>("job", "0 2 * * *", o => o.TimeZone = "Mars/Olympus_Mons"));
        Assert.Equal("TimeZone", zone.ParamName);
        Assert.Contains("Mars/Olympus_Mons", zone.Message, StringComparison.Ordinal);

        builder.AddRecurringJob<Recorder>("job", "0 2 * * *");
        var duplicate = Assert.Throws<ArgumentException>(() => builder.AddRecurringJob<Recorder>("JOB", TimeSpan.FromMinutes(1)));
        Assert.Contains("'JOB' is already registered", duplicate.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentOutOfRangeException>(() => builder.AddRecurringJob<Recorder>("other", TimeSpan.FromMilliseconds(10)));
    }

    [Theory]
    [InlineData("@job")]
    [InlineData("~job")]
    public async Task AddRecurringJobAndAddOrUpdate_IdWithAReservedPrefix_FailNamingTheId(string id)
    {
        // A durable queue keeps a job's shared schedule under "@{id}" and its pause under "~{id}", beside "{id}" (its
        // last occurrence), in one hash: "@job"'s last occurrence would be "job"'s schedule. Refused for every queue, so
        // that an id means the same on both kinds.
        var builder = new ServiceCollection().AddWorkQueue().AddRecurringJob<Recorder>("job", "0 2 * * *");
        var registered = Assert.Throws<ArgumentException>(() => builder.AddRecurringJob<Recorder>(id, "0 2 * * *"));
        Assert.Equal("id", registered.ParamName);
        Assert.Contains($"'{id}'", registered.Message, StringComparison.Ordinal);

        await using var harness = StartHost(b => b.AddRecurringJob<Recorder>("job", "0 3 * * *"));
        var jobs = harness.Services.GetRequiredService<IRecurringJobs>();
        var changed = Assert.Throws<ArgumentException>(() => jobs.AddOrUpdate<Recorder>(id, TimeSpan.FromMinutes(1)));
        Assert.Equal("id", changed.ParamName);
        Assert.Equal(["job"], jobs.GetAll().Select(j => j.Id));
    }

    [Fact]
    public void AddRecurringJob_UnknownQueue_FailsAtStartNamingTheSetting()
    {
        var ex = Assert.Throws<ArgumentException>(() => StartHost(b => b.AddRecurringJob<Recorder>("job", "0 2 * * *", o => o.Queue = "nowhere")));
        Assert.Equal("Queue", ex.ParamName);
        Assert.Contains("'nowhere'", ex.Message, StringComparison.Ordinal);
    }

    private QueueHarness StartHost(Action<IWorkQueueBuilder> addJobs)
    {
        var harness = QueueHarness.Start(
            o => { o.MinWorkers = 1; o.MaxWorkers = 1; o.Retry.MaxAttempts = 1; },
            addJobs,
            s => s.AddSingleton(new WorkQueueEnvironment(_time, () => 0.5)).AddSingleton(_runs));
        return harness;
    }

    private sealed class Runs
    {
        private readonly ConcurrentQueue<RecurringOccurrence> _items = new();

        public bool Fail { get; set; }

        public IReadOnlyCollection<RecurringOccurrence> Items => _items;

        public void Add(RecurringOccurrence occurrence) => _items.Enqueue(occurrence);
    }

    private sealed class Recorder(Runs runs) : IJobHandler<RecurringOccurrence>
    {
        public ValueTask ExecuteAsync(RecurringOccurrence payload, CancellationToken cancellationToken)
        {
            runs.Add(payload);
            return runs.Fail ? throw new InvalidOperationException("occurrence failed") : ValueTask.CompletedTask;
        }
    }
}
