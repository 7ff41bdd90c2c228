using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;
using WorkQueue.Testing.Tests.TestSupport;

namespace WorkQueue.Testing.Tests.Internal;

/// <summary>The harness's waits (in memory; the durable ones are in <see cref="DurableHarnessTests"/>) and its fake clock.</summary>
public sealed class WorkQueueTestHarnessTests
{
    private static readonly DateTimeOffset Start = new(2026, 11, 21, 1, 0, 0, TimeSpan.Zero);

    [Fact]
    public async Task WaitUntilIdleAsync_JobHandsWorkToAnotherQueue_ReturnsAfterBothRan()
    {
        await using var app = TestApp.Start();

        for (int i = 0; i < 5; i++)
        {
            await app.Queue().EnqueueAsync<HandOnHandler, string>($"job{i}");
        }

        await app.Harness.WaitUntilIdleAsync(Wait.Generous);

        // Each job ran, and so did what it handed to the other queue after its own delay.
        Assert.Equal(10, app.Log.Runs.Count);
        Assert.All(Enumerable.Range(0, 5), i => Assert.Contains($"job{i}-next", app.Log.Runs));
    }

    [Fact]
    public async Task WaitUntilIdleAsync_JobStillRunning_TimeoutNamesTheQueueItsCountsAndTheJob()
    {
        await using var app = TestApp.Start();
        var queued = await app.Queue().EnqueueAsync<BlockingHandler, string>("held", new JobOptions { IdempotencyKey = "order-1" });
        await Wait.UntilAsync(() => app.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single(q => q.Name == "default").GetSnapshot().RunningJobs == 1, "the job is running");

        var error = await Assert.ThrowsAsync<TimeoutException>(() => app.Harness.WaitUntilIdleAsync(TimeSpan.FromMilliseconds(200)));

        AssertSays(error, "queue 'default': 0 queued, 1 running, 0 waiting to retry");
        AssertSays(error, $"job {queued.JobId} {typeof(BlockingHandler).FullName}: Running, attempt 1");
        Assert.False(error.Message.Contains("queue 'second'", StringComparison.Ordinal), error.Message);

        app.Log.Gate.SetResult();
        await app.Harness.WaitUntilIdleAsync(Wait.Generous);
        Assert.Equal(["held"], app.Log.Runs);
    }

    [Fact]
    public async Task WaitUntilIdleAsync_JobScheduledForLater_IsNotWaitedFor()
    {
        await using var app = TestApp.Start();
        await app.Queue().ScheduleAsync<LogHandler, string>("tomorrow", TimeSpan.FromDays(1));
        await app.Queue().EnqueueAsync<LogHandler, string>("now");

        // A wait that counted the scheduled job would time out.
        await app.Harness.WaitUntilIdleAsync(Wait.Generous);

        Assert.Equal(["now", "scope disposed"], app.Log.Runs);
    }

    [Fact]
    public async Task AdvanceTimeAsync_ScheduledJobComesDue_HasRunWhenItReturns()
    {
        var clock = new FakeTimeProvider(Start);
        await using var app = TestApp.Start(clock: clock);
        await app.Queue().ScheduleAsync<LogHandler, string>("in an hour", TimeSpan.FromHours(1));
        await app.Queue().ScheduleAsync<LogHandler, string>("at two", Start.AddHours(1).AddMinutes(1));

        await app.Harness.AdvanceTimeAsync(TimeSpan.FromMinutes(59));
        Assert.Empty(app.Log.Runs);

        await app.Harness.AdvanceTimeAsync(TimeSpan.FromMinutes(1));
        Assert.Equal(["in an hour", "scope disposed"], app.Log.Runs);

        await app.Harness.AdvanceTimeAsync(TimeSpan.FromMinutes(1));
        Assert.Equal(["in an hour", "scope disposed", "at two", "scope disposed"], app.Log.Runs);
    }

    [Fact]
    public async Task AdvanceTimeAsync_RecurringJob_EachOccurrenceHasRunWhenItReturns()
    {
        var clock = new FakeTimeProvider(Start);
        await using var app = TestApp.Start(clock: clock, queues: q => q.AddRecurringJob<TickHandler>("tick", "*/5 * * * *"));

        for (int i = 0; i < 3; i++)
        {
            await app.Harness.AdvanceTimeAsync(TimeSpan.FromMinutes(5));
        }

        Assert.Equal(["tick 01:05", "tick 01:10", "tick 01:15"], app.Log.Runs);
    }

    [Fact]
    public async Task AdvanceTimeAsync_JobFailsAndWaitsForItsRetry_TimeoutSaysSoUntilTheClockPassesTheDelay()
    {
        var clock = new FakeTimeProvider(Start);
        await using var app = TestApp.Start(clock: clock, retries: true);
        await app.Queue().ScheduleAsync<FlakyHandler, string>("flaky", TimeSpan.FromMinutes(1));

        // The first attempt fails; its retry waits 10 s on the fake clock, which nothing moves.
        var error = await Assert.ThrowsAsync<TimeoutException>(() => app.Harness.AdvanceTimeAsync(TimeSpan.FromMinutes(1), TimeSpan.FromMilliseconds(500)));
        AssertSays(error, "queue 'default': 0 queued, 0 running, 1 waiting to retry");
        AssertSays(error, "advance it past the retry's delay");
        AssertSays(error, "first attempt fails");

        await app.Harness.AdvanceTimeAsync(TimeSpan.FromMinutes(1));
        Assert.Equal(["flaky"], app.Log.Runs);
        Assert.Equal(2, app.Log.Attempts);
    }

    [Fact]
    public async Task AdvanceTimeAsync_NoFakeClock_ThrowsSayingHowToGiveOne()
    {
        await using var app = TestApp.Start();

        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => app.Harness.AdvanceTimeAsync(TimeSpan.FromMinutes(1)));

        AssertSays(error, "FakeTime");
    }

    [Fact]
    public async Task SetMode_OneQueue_OthersKeepTheDefaultMode()
    {
        await using var app = TestApp.Start(testing: o => o.Mode = WorkQueueTestMode.Record);
        app.Harness.SetMode(WorkQueueTestMode.Run, "second");

        await app.Queue().EnqueueAsync<LogHandler, string>("held");
        await app.Queue("second").EnqueueAsync<LogHandler, string>("ran");
        await app.Harness.WaitUntilIdleAsync(Wait.Generous);

        Assert.Equal(WorkQueueTestMode.Record, app.Harness.GetMode("DEFAULT"));
        Assert.Equal(["ran", "scope disposed"], app.Log.Runs);
        Assert.Equal([("default", WorkQueueTestMode.Record), ("second", WorkQueueTestMode.Run)], app.Harness.Enqueued.Select(j => (j.QueueName, j.Mode)));

        app.Harness.SetMode(WorkQueueTestMode.Inline);
        Assert.Equal(WorkQueueTestMode.Inline, app.Harness.GetMode("second"));
    }

    [Fact]
    public async Task RunHeldAsync_HeldJobs_RunInOrderWithTheJobsTheyHeldMeanwhile()
    {
        await using var app = TestApp.Start(testing: o => o.Mode = WorkQueueTestMode.Record);
        await app.Queue().EnqueueAsync<HandOnHandler, string>("a");
        var b = await app.Queue("second").EnqueueAsync<LogHandler, string>("b", new JobOptions { IdempotencyKey = "k" });
        Assert.Empty(app.Log.Runs);

        Assert.Equal(3, await app.Harness.RunHeldAsync());

        // a, then b, then what a handed to the second queue (held there, as that queue records, and run in turn).
        Assert.Equal(["a", "b", "scope disposed", "a-next"], app.Log.Runs);
        Assert.Equal(0, await app.Harness.RunHeldAsync());
        Assert.Equal(JobState.Succeeded, (await app.Queue("second").GetJobAsync(b.JobId))!.State);
        Assert.True((await app.Queue("second").EnqueueAsync<LogHandler, string>("again", new JobOptions { IdempotencyKey = "k" })).Created);
    }

    [Fact]
    public async Task RunHeldAsync_OneQueueThenAJobThrows_StopsThereAndTheRestStaysHeld()
    {
        await using var app = TestApp.Start(testing: o => o.Mode = WorkQueueTestMode.Record);
        string failing = await app.Queue().ScheduleAsync<ThrowingHandler, string>("x", TimeSpan.FromHours(1));
        await app.Queue().EnqueueAsync<LogHandler, string>("after");
        await app.Queue("second").EnqueueAsync<LogHandler, string>("other");

        Assert.Equal(1, await app.Harness.RunHeldAsync("SECOND"));
        Assert.Equal(["other", "scope disposed"], app.Log.Runs);

        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => app.Harness.RunHeldAsync());
        Assert.Equal("boom: x", error.Message);
        Assert.Equal((JobState.DeadLettered, 1), ((await app.Queue().GetJobAsync(failing))!.State, (await app.Queue().GetJobAsync(failing))!.Attempt));
        Assert.Equal(["other", "scope disposed"], app.Log.Runs);

        Assert.Equal(1, await app.Harness.RunHeldAsync());
        Assert.Equal(["other", "scope disposed", "after", "scope disposed"], app.Log.Runs);
    }

    [Fact]
    public async Task Clear_ForgetsRecordedJobsAndTheKeysTheyHeld()
    {
        await using var app = TestApp.Start(testing: o => o.Mode = WorkQueueTestMode.Record);
        var first = await app.Queue().EnqueueAsync<LogHandler, string>("a", new JobOptions { IdempotencyKey = "k" });

        app.Harness.Clear();
        var second = await app.Queue().EnqueueAsync<LogHandler, string>("b", new JobOptions { IdempotencyKey = "k" });

        Assert.True(second.Created);
        Assert.NotEqual(first.JobId, second.JobId);
        Assert.Equal("b", Assert.Single(app.Harness.Enqueued).Payload);
    }

    private static void AssertSays(Exception error, string part) =>
        Assert.True(error.Message.Contains(part, StringComparison.Ordinal), $"Expected '{part}' in: {error.Message}");
}
