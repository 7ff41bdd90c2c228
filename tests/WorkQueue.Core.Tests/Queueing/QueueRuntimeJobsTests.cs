using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Testing;
using Microsoft.Extensions.Time.Testing;
using WorkQueue.Core.Tests.TestSupport;
using WorkQueue.Internal;

namespace WorkQueue.Core.Tests.Queueing;

/// <summary>A job's status and cancel by id on an in-memory queue (<see cref="IWorkQueue.GetJobAsync"/>, <see cref="IWorkQueue.CancelAsync"/>).</summary>
public sealed class QueueRuntimeJobsTests
{
    private static readonly JobOptions NoOptions = new();

    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2026, 11, 25, 15, 0, 0, TimeSpan.Zero));

    [Fact]
    public async Task GetJobAsync_QueuedThenRunningThenSucceeded_ReportsEachState()
    {
        await using var harness = Start();
        using var gate = new Gate();
        harness.Control.Pause();
        var enqueuedAt = _time.GetUtcNow();
        var result = await harness.Queue.EnqueueAsync(new Handler((_, ct) => gate.Block(ct)), "a", NoOptions);

        var queued = (await harness.Queue.GetJobAsync(result.JobId));
        Assert.NotNull(queued);
        Assert.Equal((JobState.Queued, 0, enqueuedAt, (DateTimeOffset?)null, (string?)null), (queued.State, queued.Attempt, queued.EnqueuedAt, queued.StartedAt, queued.WorkerName));
        Assert.Equal((result.JobId, "default"), (queued.Id, queued.QueueName));
        Assert.Contains(nameof(Handler), queued.Name);

        harness.Control.Resume();
        await Wait.ForAsync(gate.EnteredAsync(1), "the job to start");
        var running = (await harness.Queue.GetJobAsync(result.JobId))!;
        Assert.Equal((JobState.Running, 1), (running.State, running.Attempt));
        Assert.NotNull(running.StartedAt);
        Assert.StartsWith("WorkQueue:default#", running.WorkerName);

        _time.Advance(TimeSpan.FromSeconds(5));
        gate.Open();
        await Wait.UntilAsync(async () => (await harness.Queue.GetJobAsync(result.JobId))?.State == JobState.Succeeded, "the job to succeed");
        var done = (await harness.Queue.GetJobAsync(result.JobId))!;
        Assert.Equal((enqueuedAt.AddSeconds(5), false, false, (string?)null), (done.StateSince, done.CancelRequested, done.CancelIgnored, done.LastError));
    }

    [Fact]
    public async Task GetJobAsync_ScheduledJob_ReportsScheduledWithItsTime()
    {
        await using var harness = Start();
        var runAt = _time.GetUtcNow().AddMinutes(5);
        string id = harness.Queue.Schedule(_ => { }, runAt);
        var result = await harness.Queue.EnqueueAsync(new Handler((_, _) => { }), "a", new JobOptions { Delay = TimeSpan.FromMinutes(1) });

        Assert.Equal((JobState.Scheduled, runAt), ((await harness.Queue.GetJobAsync(id))!.State, (await harness.Queue.GetJobAsync(id))!.RunAt));
        Assert.Equal(JobState.Scheduled, (await harness.Queue.GetJobAsync(result.JobId))!.State);

        _time.Advance(TimeSpan.FromMinutes(5));
        await Wait.UntilAsync(async () => (await harness.Queue.GetJobAsync(id))?.State == JobState.Succeeded, "the scheduled job to run");
        await Wait.UntilAsync(async () => (await harness.Queue.GetJobAsync(result.JobId))?.State == JobState.Succeeded, "the delayed job to run");
    }

    [Fact]
    public async Task GetJobAsync_FailingJob_RetryingWithTheErrorThenDeadLettered()
    {
        await using var harness = Start(o => { o.Retry.MaxAttempts = 2; o.Retry.BaseDelay = TimeSpan.FromSeconds(10); });
        var result = await harness.Queue.EnqueueAsync(new Handler((_, _) => throw new InvalidOperationException("boom")), "a", NoOptions);

        await Wait.UntilAsync(async () => (await harness.Queue.GetJobAsync(result.JobId))?.State == JobState.Retrying, "the retry to wait");
        var retrying = (await harness.Queue.GetJobAsync(result.JobId))!;
        Assert.Equal(("boom", 1), (retrying.LastError, retrying.Attempt));
        Assert.NotNull(retrying.RunAt);

        _time.Advance(TimeSpan.FromMinutes(1));
        await Wait.UntilAsync(async () => (await harness.Queue.GetJobAsync(result.JobId))?.State == JobState.DeadLettered, "the job to be dead-lettered");
        var dead = (await harness.Queue.GetJobAsync(result.JobId))!;
        Assert.Equal(("boom", 2), (dead.LastError, dead.Attempt));
    }

    [Fact]
    public async Task GetJobAsync_UnknownOrUntrackedId_ReturnsNull()
    {
        await using var harness = Start();
        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        harness.Control.Pause();

        // A job enqueued without options has an id (1, the first) but it was never handed out: it is not tracked.
        Assert.True(harness.Queue.TryEnqueue(_ => ran.SetResult()));

        Assert.Null((await harness.Queue.GetJobAsync("1")));
        Assert.Null((await harness.Queue.GetJobAsync("12345")));
        Assert.Equal(JobCancelOutcome.NotFound, (await harness.Queue.CancelAsync("1")).Outcome);
        Assert.Equal(new JobCancelResult(JobCancelOutcome.NotFound, null), (await harness.Queue.CancelAsync("12345")));
        harness.Control.Resume();
        await Wait.ForAsync(ran.Task, "the untracked job");
    }

    [Fact]
    public async Task CancelAsync_QueuedJob_NeverRunsCountsCanceledAndFreesItsKeyAtOnceAndItsSlotWhenReached()
    {
        await using var harness = Start(o => { o.Capacity = 1; o.FullMode = QueueFullMode.Reject; });
        int runs = 0;
        var handler = new Handler((_, _) => Interlocked.Increment(ref runs));
        harness.Control.Pause();
        var first = await harness.Queue.EnqueueAsync(handler, "a", new JobOptions { IdempotencyKey = "k" });

        var result = (await harness.Queue.CancelAsync(first.JobId));

        Assert.Equal((JobCancelOutcome.Canceled, JobState.Canceled), (result.Outcome, result.Job!.State));
        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((1L, 0L, 0L), (totals.Canceled, totals.Unfinished, totals.Started));
        Assert.Equal(0, harness.Runtime.Ledger.Keys!.Count);

        // The cancelled job's item stays in the channel while the queue is paused, so it still holds the one slot...
        Assert.False(harness.Queue.TryEnqueue(_ => { }));

        // ...until a thread reaches it and drops it, without running it.
        harness.Control.Resume();
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Depth == 0, "the cancelled item to leave the channel");
        var second = await harness.Queue.EnqueueAsync(handler, "b", new JobOptions { IdempotencyKey = "k" });
        Assert.True(second.Created);
        await Wait.UntilAsync(async () => (await harness.Queue.GetJobAsync(second.JobId))?.State == JobState.Succeeded, "the second job");
        totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((1, 1L, 1L, 1L, 0L), (runs, totals.Started, totals.Succeeded, totals.Canceled, totals.Unfinished));
    }

    [Fact]
    public async Task CancelAsync_ScheduledJob_RemovedAndItsMaxScheduledJobsSlotFreed()
    {
        await using var harness = Start(o => o.MaxScheduledJobs = 1);
        int runs = 0;
        string id = harness.Queue.Schedule(_ => Interlocked.Increment(ref runs), TimeSpan.FromMinutes(5));
        Assert.Throws<JobRejectedException>(() => harness.Queue.Schedule(_ => { }, TimeSpan.FromMinutes(5)));

        var result = (await harness.Queue.CancelAsync(id));

        Assert.Equal(JobCancelOutcome.Canceled, result.Outcome);
        Assert.Equal(0, harness.Control.GetSnapshot().Scheduled);
        string other = harness.Queue.Schedule(_ => { }, TimeSpan.FromMinutes(5));
        Assert.False(harness.Queue.CancelScheduled(id));
        _time.Advance(TimeSpan.FromMinutes(6));
        await Wait.UntilAsync(async () => (await harness.Queue.GetJobAsync(other))?.State == JobState.Succeeded, "the other scheduled job");
        Assert.Equal(0, runs);
        Assert.Equal((1L, 1L), (harness.Control.GetSnapshot().Totals.Canceled, harness.Control.GetSnapshot().Totals.Succeeded));
    }

    [Fact]
    public async Task CancelScheduled_TrackedJob_StatusSaysCanceledAndCountedOnce()
    {
        await using var harness = Start();
        string id = harness.Queue.Schedule(_ => { }, TimeSpan.FromMinutes(5));

        Assert.True(harness.Queue.CancelScheduled(id));

        Assert.Equal(JobState.Canceled, (await harness.Queue.GetJobAsync(id))!.State);
        Assert.Equal(JobCancelOutcome.AlreadyFinished, (await harness.Queue.CancelAsync(id)).Outcome);
        Assert.Equal(1L, harness.Control.GetSnapshot().Totals.Canceled);
    }

    [Fact]
    public async Task CancelAsync_RunningJobHonouringItsToken_EndsCanceledWithoutRetry()
    {
        await using var harness = Start(o => o.Retry.MaxAttempts = 3);
        using var gate = new Gate();
        var result = await harness.Queue.EnqueueAsync(new Handler((_, ct) => gate.BlockCancellable(ct)), "a", NoOptions);
        await Wait.ForAsync(gate.EnteredAsync(1), "the job to start");

        var cancel = (await harness.Queue.CancelAsync(result.JobId));

        Assert.Equal((JobCancelOutcome.CancelRequested, JobState.Running, true), (cancel.Outcome, cancel.Job!.State, cancel.Job.CancelRequested));
        await Wait.UntilAsync(async () => (await harness.Queue.GetJobAsync(result.JobId))?.State == JobState.Canceled, "the job to honour the cancel");
        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((1L, 0L, 0L, 0L, 1L), (totals.Canceled, totals.Failed, totals.Retried, totals.DeadLettered, totals.Started));
        Assert.False((await harness.Queue.GetJobAsync(result.JobId))!.CancelIgnored);
        Assert.Equal(JobCancelOutcome.AlreadyFinished, (await harness.Queue.CancelAsync(result.JobId)).Outcome);
    }

    [Fact]
    public async Task CancelAsync_RunningJobIgnoringItsToken_SucceedsAndTheStatusAndALogSayTheCancelWasIgnored()
    {
        await using var harness = Start(addServices: s => s.AddFakeLogging());
        using var gate = new Gate();
        var result = await harness.Queue.EnqueueAsync(new Handler((_, ct) => gate.Block(ct)), "a", NoOptions);
        await Wait.ForAsync(gate.EnteredAsync(1), "the job to start");

        Assert.Equal(JobCancelOutcome.CancelRequested, (await harness.Queue.CancelAsync(result.JobId)).Outcome);
        gate.Open();

        await Wait.UntilAsync(async () => (await harness.Queue.GetJobAsync(result.JobId))?.State == JobState.Succeeded, "the job to complete");
        var status = (await harness.Queue.GetJobAsync(result.JobId))!;
        Assert.Equal((true, true), (status.CancelRequested, status.CancelIgnored));
        var log = Assert.Single(harness.Services.GetFakeLogCollector().GetSnapshot(), r => r.Id.Name == "JobCancelIgnored");
        Assert.Equal(Microsoft.Extensions.Logging.LogLevel.Warning, log.Level);
        Assert.Equal((1L, 0L), (harness.Control.GetSnapshot().Totals.Succeeded, harness.Control.GetSnapshot().Totals.Canceled));
    }

    [Fact]
    public async Task CancelAsync_RunningJobThatThenThrows_DeadLetteredWithoutRetry()
    {
        await using var harness = Start(o => o.Retry.MaxAttempts = 3);
        using var gate = new Gate();
        var result = await harness.Queue.EnqueueAsync(
            new Handler((_, ct) =>
            {
                gate.Block(ct);
                throw new InvalidOperationException("ignored the token");
            }),
            "a",
            NoOptions);
        await Wait.ForAsync(gate.EnteredAsync(1), "the job to start");

        await harness.Queue.CancelAsync(result.JobId);
        gate.Open();

        await Wait.UntilAsync(async () => (await harness.Queue.GetJobAsync(result.JobId))?.State == JobState.DeadLettered, "the job to end");
        var status = (await harness.Queue.GetJobAsync(result.JobId))!;
        Assert.Equal(("ignored the token", true), (status.LastError, status.CancelIgnored));
        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((0L, 1L, 1L), (totals.Retried, totals.DeadLettered, totals.Started));
    }

    [Fact]
    public async Task CancelAsync_RetryingJob_NoFurtherAttempt()
    {
        await using var harness = Start(o => { o.Retry.MaxAttempts = 3; o.Retry.BaseDelay = TimeSpan.FromSeconds(10); });
        int runs = 0;
        var result = await harness.Queue.EnqueueAsync(
            new Handler((_, _) =>
            {
                Interlocked.Increment(ref runs);
                throw new InvalidOperationException("boom");
            }),
            "a",
            NoOptions);
        await Wait.UntilAsync(async () => (await harness.Queue.GetJobAsync(result.JobId))?.State == JobState.Retrying, "the retry to wait");

        var cancel = (await harness.Queue.CancelAsync(result.JobId));

        Assert.Equal((JobCancelOutcome.Canceled, "boom"), (cancel.Outcome, cancel.Job!.LastError));
        Assert.Equal(0, harness.Runtime.PendingRetries);
        _time.Advance(TimeSpan.FromMinutes(5));
        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((1, 1L, 1L, 0L), (runs, totals.Canceled, totals.Retried, totals.Unfinished));
    }

    [Fact]
    public async Task CancelAsync_QueuedJobThenDropOldestPushesItsItemOut_CountedOnceAsCanceled()
    {
        await using var harness = Start(o => { o.Capacity = 1; o.FullMode = QueueFullMode.DropOldest; });
        harness.Control.Pause();
        var first = await harness.Queue.EnqueueAsync(new Handler((_, _) => { }), "a", NoOptions);
        await harness.Queue.CancelAsync(first.JobId);

        Assert.True(harness.Queue.TryEnqueue(_ => { }));

        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((1L, 0L), (totals.Canceled, totals.Dropped));
        Assert.Equal(JobState.Canceled, (await harness.Queue.GetJobAsync(first.JobId))!.State);
    }

    [Fact]
    public async Task GetJobAsync_JobPushedOutByDropOldest_ReportsDropped()
    {
        await using var harness = Start(o => { o.Capacity = 1; o.FullMode = QueueFullMode.DropOldest; });
        harness.Control.Pause();
        var first = await harness.Queue.EnqueueAsync(new Handler((_, _) => { }), "a", NoOptions);

        await harness.Queue.EnqueueAsync(new Handler((_, _) => { }), "b", NoOptions);

        Assert.Equal(JobState.Dropped, (await harness.Queue.GetJobAsync(first.JobId))!.State);
        Assert.Equal(JobCancelOutcome.AlreadyFinished, (await harness.Queue.CancelAsync(first.JobId)).Outcome);
        Assert.Equal(1L, harness.Control.GetSnapshot().Totals.Dropped);
    }

    [Fact]
    public async Task CancelAsync_QueuedJobThenStopAbandonsTheQueue_NotInTheReport()
    {
        await using var harness = Start();
        using var gate = new Gate();

        // The one thread is held, so the cancelled job's item is still in the channel when the stop abandons it.
        Assert.True(harness.Queue.TryEnqueue(gate.BlockCancellable));
        await Wait.ForAsync(gate.EnteredAsync(1), "the blocking job to start");
        var canceled = await harness.Queue.EnqueueAsync(new Handler((_, _) => { }), "a", NoOptions);
        var kept = await harness.Queue.EnqueueAsync(new Handler((_, _) => { }), "b", NoOptions);
        await harness.Queue.CancelAsync(canceled.JobId);

        var report = await harness.Control.StopAsync(TimeSpan.Zero);

        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((3L, 1L, 2L, 0L), (totals.Enqueued, totals.Canceled, totals.Abandoned, totals.Unfinished));
        Assert.Equal([kept.JobId], report.Abandoned.Where(a => a.Reason == AbandonReason.NotStarted).Select(a => a.Job.Id));
        Assert.DoesNotContain(report.Abandoned, a => a.Job.Id == canceled.JobId);
        Assert.Equal((JobState.Canceled, JobState.Abandoned), ((await harness.Queue.GetJobAsync(canceled.JobId))!.State, (await harness.Queue.GetJobAsync(kept.JobId))!.State));
    }

    [Fact]
    public async Task GetJobAsync_EndedJob_ForgottenAfterTheRetention()
    {
        await using var harness = Start(o => o.FinishedJobRetention = TimeSpan.FromMinutes(10));
        var result = await harness.Queue.EnqueueAsync(new Handler((_, _) => { }), "a", NoOptions);
        await Wait.UntilAsync(async () => (await harness.Queue.GetJobAsync(result.JobId))?.State == JobState.Succeeded, "the job to succeed");

        _time.Advance(TimeSpan.FromMinutes(9));
        Assert.NotNull((await harness.Queue.GetJobAsync(result.JobId)));
        _time.Advance(TimeSpan.FromMinutes(1));

        Assert.Null((await harness.Queue.GetJobAsync(result.JobId)));
        Assert.Equal(JobCancelOutcome.NotFound, (await harness.Queue.CancelAsync(result.JobId)).Outcome);
        Assert.Equal(0, harness.Runtime.Tracker.Count);
    }

    [Fact]
    public async Task GetJobAsync_MoreEndedJobsThanMaxFinishedJobs_OldestForgottenFirst()
    {
        await using var harness = Start(o => o.MaxFinishedJobs = 2);
        var ids = new List<string>();
        for (int i = 0; i < 3; i++)
        {
            var result = await harness.Queue.EnqueueAsync(new Handler((_, _) => { }), "a", NoOptions);
            await Wait.UntilAsync(async () => (await harness.Queue.GetJobAsync(result.JobId))?.State == JobState.Succeeded, "the job to succeed");
            ids.Add(result.JobId);
        }

        Assert.Null((await harness.Queue.GetJobAsync(ids[0])));
        Assert.NotNull((await harness.Queue.GetJobAsync(ids[1])));
        Assert.NotNull((await harness.Queue.GetJobAsync(ids[2])));
    }

    [Fact]
    public async Task GetJobAsync_ZeroRetention_ForgetsAJobAsItEnds()
    {
        await using var harness = Start(o => o.FinishedJobRetention = TimeSpan.Zero);
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var result = await harness.Queue.EnqueueAsync(new Handler((_, _) => done.SetResult()), "a", NoOptions);
        await Wait.ForAsync(done.Task, "the job");

        await Wait.UntilAsync(async () => (await harness.Queue.GetJobAsync(result.JobId)) is null, "the job to be forgotten");
        Assert.Equal(0, harness.Runtime.Tracker.Count);
    }

    [Fact]
    public async Task EnqueueRefused_IdIsNotTracked()
    {
        await using var harness = Start(o => { o.Capacity = 1; o.FullMode = QueueFullMode.Reject; });
        harness.Control.Pause();
        await harness.Queue.EnqueueAsync(new Handler((_, _) => { }), "a", NoOptions);

        await Assert.ThrowsAsync<JobRejectedException>(async () => await harness.Queue.EnqueueAsync(new Handler((_, _) => { }), "b", NoOptions));

        Assert.Equal(1, harness.Runtime.Tracker.Count);
        harness.Control.Resume();
    }

    private QueueHarness Start(Action<WorkQueueOptions>? configure = null, Action<IServiceCollection>? addServices = null) =>
        QueueHarness.Start(
            o =>
            {
                o.MinWorkers = 1;
                o.MaxWorkers = 1;
                configure?.Invoke(o);
            },
            addServices: s =>
            {
                s.AddSingleton(new WorkQueueEnvironment(_time, () => 0.5));
                addServices?.Invoke(s);
            });

    private sealed class Handler(Action<string, CancellationToken> run) : IJobHandler<string>
    {
        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
        {
            run(payload, cancellationToken);
            return ValueTask.CompletedTask;
        }
    }
}
