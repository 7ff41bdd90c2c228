using WorkQueue.Testing.Tests.TestSupport;

namespace WorkQueue.Testing.Tests.Internal;

/// <summary>The typed producer calls (<see cref="IWorkQueue"/>) in each mode, on in-memory queues (durable: <see cref="DurableHarnessTests"/>).</summary>
public sealed class RecordingWorkQueueTests
{
    private static readonly DateTimeOffset At = new(2026, 11, 21, 2, 0, 0, TimeSpan.Zero);

    [Fact]
    public async Task EnqueueAndSchedule_RecordMode_RecordsQueueHandlerPayloadAndOptionsWithoutRunning()
    {
        await using var app = TestApp.Start(testing: o => o.Mode = WorkQueueTestMode.Record);
        var queue = app.Queue("second");

        await queue.EnqueueAsync<LogHandler, string>("plain");
        var keyed = await queue.EnqueueAsync<LogHandler, string>("keyed", new JobOptions { IdempotencyKey = "order-1", RunAt = At });
        string delayed = await queue.ScheduleAsync<LogHandler, string>("delayed", TimeSpan.FromMinutes(5));
        await app.Harness.WaitUntilIdleAsync(Wait.Generous);

        Assert.Empty(app.Log.Runs);
        var jobs = app.Harness.EnqueuedFor<LogHandler>("SECOND");
        Assert.Equal(3, jobs.Count);
        Assert.All(jobs, j => Assert.Equal(("second", typeof(LogHandler), WorkQueueTestMode.Record, true), (j.QueueName, j.HandlerType, j.Mode, j.Created)));
        Assert.Equal(["plain", "keyed", "delayed"], jobs.Select(j => j.PayloadAs<string>()));
        Assert.Equal((keyed.JobId, "order-1", (DateTimeOffset?)At, (TimeSpan?)null), (jobs[1].JobId, jobs[1].IdempotencyKey, jobs[1].RunAt, jobs[1].Delay));
        Assert.Equal((delayed, (TimeSpan?)TimeSpan.FromMinutes(5)), (jobs[2].JobId, jobs[2].Delay));
        Assert.Empty(app.Harness.EnqueuedFor<LogHandler>("default"));
        Assert.Empty(app.Harness.EnqueuedFor<SlowLogHandler>());
    }

    [Fact]
    public async Task EnqueueAsync_RecordModeKeyHeldByARecordedJob_NotCreatedWithTheHoldersId()
    {
        await using var app = TestApp.Start(testing: o => o.Mode = WorkQueueTestMode.Record);

        var first = await app.Queue().EnqueueAsync<LogHandler, string>("a", new JobOptions { IdempotencyKey = "k" });
        var second = await app.Queue().EnqueueAsync<LogHandler, string>("b", new JobOptions { IdempotencyKey = "k" });
        var otherQueue = await app.Queue("second").EnqueueAsync<LogHandler, string>("c", new JobOptions { IdempotencyKey = "k" });

        Assert.True(first.Created);
        Assert.Equal((first.JobId, false), (second.JobId, second.Created));
        Assert.True(otherQueue.Created);
        Assert.Equal([true, false, true], app.Harness.Enqueued.Select(j => j.Created));
    }

    [Fact]
    public async Task GetJobAndCancel_RecordedScheduledJob_AnsweredAsTheQueueWouldAndTheKeyFreed()
    {
        await using var app = TestApp.Start(testing: o => o.Mode = WorkQueueTestMode.Record);
        var queue = app.Queue();
        var held = await queue.EnqueueAsync<LogHandler, string>("later", new JobOptions { IdempotencyKey = "k", Delay = TimeSpan.FromHours(1) });

        var status = await queue.GetJobAsync(held.JobId);
        Assert.NotNull(status);
        Assert.Equal((JobState.Scheduled, "default", typeof(LogHandler).FullName, (object?)"later"), (status.State, status.QueueName, status.Name, status.Payload));
        Assert.Equal(status.EnqueuedAt + TimeSpan.FromHours(1), status.RunAt);

        Assert.True(await queue.CancelScheduledAsync(held.JobId));
        Assert.False(await queue.CancelScheduledAsync(held.JobId));
        Assert.Equal(JobState.Canceled, (await queue.GetJobAsync(held.JobId))!.State);
        Assert.Equal(JobCancelOutcome.AlreadyFinished, (await queue.CancelAsync(held.JobId)).Outcome);
        Assert.True((await queue.EnqueueAsync<LogHandler, string>("again", new JobOptions { IdempotencyKey = "k" })).Created);

        // An id the harness did not make is the queue's to answer.
        Assert.Null(await queue.GetJobAsync("12345"));
        Assert.Equal(JobCancelOutcome.NotFound, (await queue.CancelAsync("12345")).Outcome);
    }

    [Fact]
    public async Task EnqueueAsync_RecordModeInvalidOptions_RefusedAsTheQueueRefusesThem()
    {
        await using var app = TestApp.Start(testing: o => o.Mode = WorkQueueTestMode.Record);

        var error = await Assert.ThrowsAsync<ArgumentException>(async () =>
            await app.Queue().EnqueueAsync<LogHandler, string>("x", new JobOptions { Delay = TimeSpan.FromSeconds(1), RunAt = At }));

        Assert.Contains("cannot both be set", error.Message);
        Assert.Empty(app.Harness.Enqueued);
    }

    [Fact]
    public async Task EnqueueAsync_InlineMode_RunsInTheCallersCallInAScopeOfItsOwn()
    {
        await using var app = TestApp.Start(testing: o => o.Mode = WorkQueueTestMode.Inline);

        var result = await app.Queue().EnqueueAsync<LogHandler, string>("now", new JobOptions { IdempotencyKey = "k" });
        string scheduled = await app.Queue().ScheduleAsync<LogHandler, string>("scheduled, run now", TimeSpan.FromDays(1));

        // Ran before each call returned, its scoped service disposed with its scope.
        Assert.Equal(["now", "scope disposed", "scheduled, run now", "scope disposed"], app.Log.Runs);
        Assert.True(result.Created);
        Assert.Equal(JobState.Succeeded, (await app.Queue().GetJobAsync(scheduled))!.State);
        Assert.Equal([WorkQueueTestMode.Inline, WorkQueueTestMode.Inline], app.Harness.Enqueued.Select(j => j.Mode));
    }

    [Fact]
    public async Task EnqueueAsync_InlineModeHandlerThrows_TheCallThrowsAndTheJobIsRecordedFailed()
    {
        await using var app = TestApp.Start(testing: o => o.Mode = WorkQueueTestMode.Inline);

        var error = await Assert.ThrowsAsync<InvalidOperationException>(async () =>
            await app.Queue().EnqueueAsync<ThrowingHandler, string>("x", new JobOptions()));

        Assert.Equal("boom: x", error.Message);
        var job = Assert.Single(app.Harness.Enqueued);
        var status = await app.Queue().GetJobAsync(job.JobId!);
        Assert.Equal(JobState.DeadLettered, status!.State);
        Assert.Contains("boom: x", status.LastError);
        await app.Harness.WaitUntilIdleAsync(Wait.Generous);
    }

    [Fact]
    public async Task EnqueueAsync_InlineJobEnqueuesAnother_ItRunsInlineToo()
    {
        await using var app = TestApp.Start(testing: o => o.Mode = WorkQueueTestMode.Inline);

        await app.Queue().EnqueueAsync<HandOnHandler, string>("first");

        Assert.Equal(["first", "first-next"], app.Log.Runs);
        Assert.Equal([("default", typeof(HandOnHandler)), ("second", typeof(SlowLogHandler))], app.Harness.Enqueued.Select(j => (j.QueueName, j.HandlerType!)));
    }

    [Fact]
    public async Task EnqueueAsync_RunMode_RunsOnTheQueueAndRecordsTheQueuesJobId()
    {
        await using var app = TestApp.Start();

        var result = await app.Queue().EnqueueAsync<LogHandler, string>("ran", new JobOptions { IdempotencyKey = "k" });
        await app.Queue().EnqueueAsync<LogHandler, string>("plain");
        await app.Harness.WaitUntilIdleAsync(Wait.Generous);

        Assert.Equal(["plain", "ran", "scope disposed", "scope disposed"], app.Log.Runs.Order());
        Assert.Equal([result.JobId, null], app.Harness.Enqueued.Select(j => j.JobId));
        Assert.Equal(JobState.Succeeded, (await app.Queue().GetJobAsync(result.JobId))!.State);
    }
}
