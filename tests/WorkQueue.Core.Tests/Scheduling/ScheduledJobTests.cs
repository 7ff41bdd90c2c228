using System.Collections.Concurrent;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.Metrics.Testing;
using Microsoft.Extensions.Time.Testing;
using WorkQueue.Core.Tests.TestSupport;
using WorkQueue.Internal;
using WorkQueue.Telemetry;

namespace WorkQueue.Core.Tests.Scheduling;

/// <summary>Delayed jobs on an in-memory queue (<see cref="IInMemoryWorkQueue.Schedule(Action{CancellationToken}, DateTimeOffset)"/>), on a <see cref="FakeTimeProvider"/>.</summary>
public sealed class ScheduledJobTests
{
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2026, 11, 25, 2, 0, 0, TimeSpan.Zero));

    [Fact]
    public async Task Schedule_Delay_RunsOnlyOnceTheDelayHasPassed()
    {
        await using var harness = Start();
        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        string id = harness.Queue.Schedule(_ => ran.SetResult(), TimeSpan.FromMinutes(30));

        Assert.Equal(1, harness.Control.GetSnapshot().Scheduled);
        _time.Advance(TimeSpan.FromMinutes(29.99));
        Assert.False(ran.Task.IsCompleted);
        Assert.Equal(1, harness.Control.GetSnapshot().Scheduled);

        _time.Advance(TimeSpan.FromSeconds(1));
        await Wait.ForAsync(ran.Task, "the job once due");
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Succeeded == 1, "the success is counted");
        var snapshot = harness.Control.GetSnapshot();
        Assert.Equal((0, 1L, 0L), (snapshot.Scheduled, snapshot.Totals.Enqueued, snapshot.Totals.Unfinished));
        Assert.True(long.Parse(id) > 0);
    }

    [Fact]
    public async Task Schedule_DueTimesOutOfOrder_RunInDueOrder()
    {
        await using var harness = Start();
        var order = new ConcurrentQueue<int>();
        int[] minutes = [7, 3, 9, 1, 5, 2, 8, 4, 6, 10];
        foreach (int m in minutes)
        {
            harness.Queue.Schedule(_ => order.Enqueue(m), _time.GetUtcNow().AddMinutes(m));
        }

        // One step past them all: the due jobs are handed over in due order, and the one thread runs them in that order.
        _time.Advance(TimeSpan.FromMinutes(11));
        await Wait.UntilAsync(() => order.Count == minutes.Length, "every job");
        Assert.Equal(Enumerable.Range(1, 10), order);
    }

    [Fact]
    public async Task Schedule_StepByStep_EachRunsWhenItsTimeComesAndNotBefore()
    {
        await using var harness = Start();
        var ran = new ConcurrentQueue<int>();
        harness.Queue.Schedule(_ => ran.Enqueue(2), TimeSpan.FromSeconds(2));
        harness.Queue.Schedule(_ => ran.Enqueue(1), TimeSpan.FromSeconds(1));

        // Beyond the scheduler's longest timer (it re-checks every minute), so the re-arm path is crossed too.
        harness.Queue.Schedule(_ => ran.Enqueue(3), TimeSpan.FromMinutes(3));

        _time.Advance(TimeSpan.FromSeconds(1));
        await Wait.UntilAsync(() => ran.Count == 1, "the first job");
        _time.Advance(TimeSpan.FromSeconds(1));
        await Wait.UntilAsync(() => ran.Count == 2, "the second job");
        for (int i = 0; i < 3; i++)
        {
            _time.Advance(TimeSpan.FromSeconds(59));
        }

        Assert.Equal(2, ran.Count);
        _time.Advance(TimeSpan.FromSeconds(2));
        await Wait.UntilAsync(() => ran.Count == 3, "the third job");
        Assert.Equal([1, 2, 3], ran);
    }

    [Fact]
    public async Task Schedule_TimeInThePast_RunsNow()
    {
        await using var harness = Start();
        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var handlerRan = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        harness.Queue.Schedule(_ => ran.SetResult(), _time.GetUtcNow().AddHours(-1));
        harness.Queue.Schedule(new Handler(handlerRan), "payload", TimeSpan.FromSeconds(-5));

        await Wait.ForAsync(ran.Task, "the job scheduled in the past");
        await Wait.ForAsync(handlerRan.Task, "the job with a negative delay");
        Assert.Equal(0, harness.Control.GetSnapshot().Scheduled);
    }

    [Fact]
    public async Task Schedule_AllJobKinds_RunWithTheirPayloads()
    {
        await using var harness = Start(addServices: s => s.AddSingleton<Recorder>());
        var recorder = harness.Services.GetRequiredService<Recorder>();
        var handlerRan = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        harness.Queue.Schedule(_ => recorder.Add("sync"), TimeSpan.FromSeconds(1));
        harness.Queue.Schedule(_ => { recorder.Add("async"); return ValueTask.CompletedTask; }, _time.GetUtcNow().AddSeconds(1));
        harness.Queue.Schedule(new Handler(handlerRan), "instance", TimeSpan.FromSeconds(1));
        harness.Queue.Schedule<ScopedHandler, string>("scoped", _time.GetUtcNow().AddSeconds(1));

        _time.Advance(TimeSpan.FromSeconds(1));
        await Wait.ForAsync(handlerRan.Task, "the instance handler");
        await Wait.UntilAsync(() => recorder.Items.Count == 3, "the delegates and the scoped handler");
        Assert.Equal(["async", "scoped", "sync"], recorder.Items.Order());
    }

    [Fact]
    public async Task ScheduleAsync_TypedHandler_CompletesAtOnceAndRunsWhenDue()
    {
        await using var harness = Start(addServices: s => s.AddSingleton<Recorder>());
        var recorder = harness.Services.GetRequiredService<Recorder>();
        IWorkQueue queue = harness.Queue;

        var byDelay = queue.ScheduleAsync<ScopedHandler, string>("delay", TimeSpan.FromSeconds(1));
        var byTime = queue.ScheduleAsync<ScopedHandler, string>("time", _time.GetUtcNow().AddSeconds(2));

        Assert.True(byDelay.IsCompletedSuccessfully && byTime.IsCompletedSuccessfully);
        var status = await queue.GetJobAsync(await byTime);
        Assert.Equal((JobState.Scheduled, _time.GetUtcNow().AddSeconds(2)), (status!.State, status.RunAt));
        _time.Advance(TimeSpan.FromSeconds(1));
        await Wait.UntilAsync(() => recorder.Items.Count == 1, "the job scheduled by a delay");
        Assert.Equal(["delay"], recorder.Items);
        _time.Advance(TimeSpan.FromSeconds(1));
        await Wait.UntilAsync(() => recorder.Items.Count == 2, "the job scheduled at a time");
        Assert.Equal(JobState.Succeeded, (await queue.GetJobAsync(await byDelay))?.State);
    }

    [Fact]
    public async Task CancelScheduledAsync_BeforeItsTime_NeverRunsAndCountsAsCanceled()
    {
        await using var harness = Start(addServices: s => s.AddSingleton<Recorder>());
        var recorder = harness.Services.GetRequiredService<Recorder>();
        IWorkQueue queue = harness.Queue;
        string id = await queue.ScheduleAsync<ScopedHandler, string>("cancelled", TimeSpan.FromMinutes(1));
        await queue.ScheduleAsync<ScopedHandler, string>("kept", TimeSpan.FromMinutes(1));

        Assert.True(await queue.CancelScheduledAsync(id));
        Assert.False(await queue.CancelScheduledAsync(id));
        Assert.False(await queue.CancelScheduledAsync("12345"));

        _time.Advance(TimeSpan.FromMinutes(2));
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Succeeded == 1, "the job that was not cancelled");
        Assert.Equal(["kept"], recorder.Items);
        Assert.Equal((2L, 1L, 0L), (harness.Control.GetSnapshot().Totals.Enqueued, harness.Control.GetSnapshot().Totals.Canceled, harness.Control.GetSnapshot().Totals.Unfinished));
    }

    [Fact]
    public async Task ScheduleAsync_Refused_FaultsTheTaskAndADelayOutOfRangeThrowsNamingIt()
    {
        await using var harness = Start(o => o.MaxScheduledJobs = 1);
        IWorkQueue queue = harness.Queue;
        await queue.ScheduleAsync<ScopedHandler, string>("held", TimeSpan.FromMinutes(1));

        var refused = queue.ScheduleAsync<ScopedHandler, string>("refused", TimeSpan.FromMinutes(1));

        Assert.True(refused.IsFaulted);
        var ex = await Assert.ThrowsAsync<JobRejectedException>(async () => await refused);
        Assert.Equal(RejectionReason.QueueFull, ex.Reason);
        Assert.Contains("MaxScheduledJobs", ex.Message);
        var outOfRange = Assert.Throws<ArgumentOutOfRangeException>(() => queue.ScheduleAsync<ScopedHandler, string>("far", TimeSpan.MaxValue));
        Assert.Equal("delay", outOfRange.ParamName);
    }

    [Fact]
    public async Task EnqueueAsyncWithDelay_Refused_FaultsTheTaskAsScheduleAsyncDoes_AndFreesTheKey()
    {
        // One API for both kinds of queue: a refusal is the task's exception (a durable queue can only answer so), not
        // a throw from the call, whether the job was scheduled with ScheduleAsync or with JobOptions.Delay.
        await using var harness = Start(o => o.MaxScheduledJobs = 1);
        IWorkQueue queue = harness.Queue;
        await queue.EnqueueAsync<ScopedHandler, string>("held", new JobOptions { Delay = TimeSpan.FromMinutes(1) });

        var refused = queue.EnqueueAsync<ScopedHandler, string>("refused", new JobOptions { Delay = TimeSpan.FromMinutes(1), IdempotencyKey = "k" });

        Assert.True(refused.IsFaulted);
        var ex = await Assert.ThrowsAsync<JobRejectedException>(async () => await refused);
        Assert.Equal(RejectionReason.QueueFull, ex.Reason);
        Assert.Contains("MaxScheduledJobs", ex.Message);
        Assert.True(harness.Queue.CancelScheduled((await queue.FindJobsAsync(new JobQuery { States = [JobState.Scheduled] })).Jobs.Single().Id));
        var again = await queue.EnqueueAsync<ScopedHandler, string>("again", new JobOptions { Delay = TimeSpan.FromMinutes(1), IdempotencyKey = "k" });
        Assert.True(again.Created);
    }

    [Fact]
    public async Task CancelScheduled_BeforeItsTime_NeverRunsAndCountsAsCanceled()
    {
        await using var harness = Start();
        int runs = 0;
        string id = harness.Queue.Schedule(_ => Interlocked.Increment(ref runs), TimeSpan.FromMinutes(1));
        var kept = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        harness.Queue.Schedule(_ => kept.SetResult(), TimeSpan.FromMinutes(1));

        Assert.True(harness.Queue.CancelScheduled(id));
        Assert.False(harness.Queue.CancelScheduled(id));
        Assert.False(harness.Queue.CancelScheduled("12345"));

        _time.Advance(TimeSpan.FromMinutes(2));
        await Wait.ForAsync(kept.Task, "the job that was not cancelled");
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Succeeded == 1, "its success");
        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((0, 2L, 1L, 1L, 0L), (runs, totals.Enqueued, totals.Canceled, totals.Succeeded, totals.Unfinished));
    }

    [Fact]
    public async Task CancelScheduled_AfterItCameDue_ReturnsFalseAndTheJobRuns()
    {
        await using var harness = Start();
        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        string id = harness.Queue.Schedule(_ => ran.SetResult(), TimeSpan.FromSeconds(1));
        _time.Advance(TimeSpan.FromSeconds(1));
        await Wait.ForAsync(ran.Task, "the job");

        Assert.False(harness.Queue.CancelScheduled(id));
        Assert.Equal(0, harness.Control.GetSnapshot().Totals.Canceled);
    }

    [Fact]
    public async Task Schedule_DelayPastTheLatestRepresentableTime_ThrowsNamingDelay()
    {
        await using var harness = Start();
        var ex = Assert.Throws<ArgumentOutOfRangeException>(() => harness.Queue.Schedule(_ => { }, TimeSpan.MaxValue));
        Assert.Equal("delay", ex.ParamName);

        // The refused call is counted as a rejection, so the totals still add up.
        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((0L, 0L), (totals.Enqueued, totals.Unfinished));

        // The latest time itself is accepted and waits (the timer is never armed past what it accepts).
        string id = harness.Queue.Schedule(_ => { }, DateTimeOffset.MaxValue);
        _time.Advance(TimeSpan.FromDays(365));
        Assert.Equal(1, harness.Control.GetSnapshot().Scheduled);
        Assert.True(harness.Queue.CancelScheduled(id));
    }

    [Fact]
    public async Task Schedule_AtMaxScheduledJobs_RejectsNamingTheSetting_AndDoesNotUseCapacity()
    {
        await using var harness = Start(o => { o.Capacity = 1; o.MaxScheduledJobs = 2; o.FullMode = QueueFullMode.Reject; });
        using var gate = new Gate();
        Assert.True(harness.Queue.TryEnqueue(gate.Block));
        await Wait.ForAsync(gate.EnteredAsync(1), "the one thread to be busy");
        Assert.True(harness.Queue.TryEnqueue(_ => { }));
        Assert.False(harness.Queue.TryEnqueue(_ => { }));

        // The queue is full, yet scheduling has room of its own.
        harness.Queue.Schedule(_ => { }, TimeSpan.FromMinutes(1));
        harness.Queue.Schedule(_ => { }, TimeSpan.FromMinutes(1));
        var ex = Assert.Throws<JobRejectedException>(() => harness.Queue.Schedule(_ => { }, TimeSpan.FromMinutes(1)));
        Assert.Equal(RejectionReason.QueueFull, ex.Reason);
        Assert.Contains("MaxScheduledJobs (2)", ex.Message, StringComparison.Ordinal);

        // Due jobs go to the threads though the channel is full: they were accepted already.
        _time.Advance(TimeSpan.FromMinutes(1));
        gate.Open();
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Succeeded == 4, "the blocked, queued and both due jobs");
        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((4L, 2L, 0L), (totals.Enqueued, totals.Rejected, totals.Unfinished));
    }

    [Fact]
    public async Task Schedule_WhilePaused_DueJobWaitsForResume()
    {
        await using var harness = Start();
        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        harness.Control.Pause();
        harness.Queue.Schedule(_ => ran.SetResult(), TimeSpan.FromSeconds(1));
        _time.Advance(TimeSpan.FromSeconds(2));
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Scheduled == 0, "the job to come due");
        Assert.False(ran.Task.IsCompleted);

        harness.Control.Resume();
        await Wait.ForAsync(ran.Task, "the job after resume");
    }

    [Fact]
    public async Task StopAsync_WithJobsNotDue_ReportsThemAsNotDueAtOnceWithoutWaitingForTheirTime()
    {
        var harness = Start();
        int runs = 0;
        string first = harness.Queue.Schedule(_ => Interlocked.Increment(ref runs), TimeSpan.FromHours(1));
        string second = harness.Queue.Schedule<string>(new Handler(new TaskCompletionSource()), "p", TimeSpan.FromHours(2));

        // The fake clock never moves: the stop ends on its own, not at a deadline.
        var report = await Wait.ForAsync(harness.Control.StopAsync(Timeout.InfiniteTimeSpan), "the stop");
        Assert.Equal([(first, AbandonReason.NotDue), (second, AbandonReason.NotDue)], report.Abandoned.Select(a => (a.Job.Id, a.Reason)).Order());
        Assert.Equal("p", report.Abandoned.Single(a => a.Job.Id == second).Job.Payload);

        var rejected = Assert.Throws<JobRejectedException>(() => harness.Queue.Schedule(_ => { }, TimeSpan.FromSeconds(1)));
        Assert.Equal(RejectionReason.QueueStopped, rejected.Reason);
        _time.Advance(TimeSpan.FromHours(3));
        Assert.Equal(0, runs);
        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((2L, 2L, 0L), (totals.Enqueued, totals.Abandoned, totals.Unfinished));
        await harness.DisposeAsync();
    }

    [Fact]
    public async Task StopAsync_RunningJobSchedulesDuringTheDrain_ADueJobRunsAndAWaitingOneIsRefused()
    {
        var harness = Start();
        using var gate = new Gate();
        var child = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        JobRejectedException? refused = null;
        Assert.True(harness.Queue.TryEnqueue(ct =>
        {
            gate.Block(ct);
            harness.Queue.Schedule(_ => child.SetResult(), TimeSpan.Zero);
            refused = Assert.Throws<JobRejectedException>(() => harness.Queue.Schedule(_ => { }, TimeSpan.FromMinutes(1)));
        }));
        await Wait.ForAsync(gate.EnteredAsync(1), "the parent job to start");

        var stop = harness.Control.StopAsync(Timeout.InfiniteTimeSpan);
        await Wait.UntilAsync(() => !harness.Control.GetSnapshot().IsAccepting, "the drain to begin");
        gate.Open();

        await Wait.ForAsync(child.Task, "the due job scheduled during the drain");
        var report = await Wait.ForAsync(stop, "the stop");
        Assert.True(report.Drained);
        Assert.Equal(RejectionReason.QueueStopped, refused!.Reason);
        await harness.DisposeAsync();
    }

    [Fact]
    public async Task GetScheduledJobs_ListsWaitingJobsSoonestFirst()
    {
        await using var harness = Start();
        var now = _time.GetUtcNow();
        string late = harness.Queue.Schedule<string>(new Handler(new TaskCompletionSource()), "late", now.AddHours(2));
        string soon = harness.Queue.Schedule<string>(new Handler(new TaskCompletionSource()), "soon", now.AddMinutes(5));
        string middle = harness.Queue.Schedule<string>(new Handler(new TaskCompletionSource()), "middle", now.AddHours(1));

        var listed = harness.Control.GetScheduledJobs(2);
        Assert.Equal([soon, middle], listed.Select(j => j.Job.Id));
        Assert.Equal(now.AddMinutes(5), listed[0].DueAt);
        Assert.Equal(now, listed[0].ScheduledAt);
        Assert.Equal("soon", listed[0].Job.Payload);
        Assert.Equal(3, harness.Control.GetScheduledJobs(100).Count);
        Assert.Throws<ArgumentOutOfRangeException>(() => harness.Control.GetScheduledJobs(-1));
        Assert.True(harness.Queue.CancelScheduled(late));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(7)]
    [InlineData(40)]
    [InlineData(41)]
    [InlineData(int.MaxValue)]
    public async Task GetScheduledJobs_ManyJobsOutOfOrder_ReturnsTheSoonestInDueOrder(int maxCount)
    {
        await using var harness = Start();
        var now = _time.GetUtcNow();
        var random = new Random(20261125);
        var scheduled = new List<(long Id, DateTimeOffset DueAt)>();
        for (int i = 0; i < 40; i++)
        {
            // Ten distinct times for forty jobs: ties too, in the middle and at the cut.
            var dueAt = now.AddMinutes(random.Next(1, 11));
            scheduled.Add((long.Parse(harness.Queue.Schedule(_ => { }, dueAt)), dueAt));
        }

        var listed = harness.Control.GetScheduledJobs(maxCount);

        var expected = scheduled.OrderBy(j => j.DueAt).ThenBy(j => j.Id).Take(maxCount).ToList();
        Assert.Equal(expected, listed.Select(j => (long.Parse(j.Job.Id), j.DueAt)));
    }

    [Fact]
    public async Task GetScheduledJobs_SameInstant_ListsInIdOrderWhateverTheOffset()
    {
        await using var harness = Start();
        var dueAt = _time.GetUtcNow().AddHours(1);
        string first = harness.Queue.Schedule(_ => { }, dueAt.ToOffset(TimeSpan.FromHours(2)));
        string second = harness.Queue.Schedule(_ => { }, dueAt);
        string third = harness.Queue.Schedule(_ => { }, dueAt.ToOffset(TimeSpan.FromHours(-5)));
        string sooner = harness.Queue.Schedule(_ => { }, dueAt.AddTicks(-1).ToOffset(TimeSpan.FromHours(9)));

        Assert.Equal([sooner, first, second, third], harness.Control.GetScheduledJobs(10).Select(j => j.Job.Id));
        Assert.Equal([sooner, first], harness.Control.GetScheduledJobs(2).Select(j => j.Job.Id));

        // Listed as scheduled: the offset the caller gave is kept.
        Assert.Equal(TimeSpan.FromHours(-5), harness.Control.GetScheduledJobs(4)[3].DueAt.Offset);
    }

    [Fact]
    public async Task GetScheduledJobs_CancelledAndDueJobs_AreNotListed()
    {
        await using var harness = Start();
        var now = _time.GetUtcNow();
        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        string due = harness.Queue.Schedule(_ => ran.SetResult(), now.AddMinutes(1));
        string cancelled = harness.Queue.Schedule(_ => { }, now.AddMinutes(2));
        string third = harness.Queue.Schedule(_ => { }, now.AddMinutes(3));
        string fourth = harness.Queue.Schedule(_ => { }, now.AddMinutes(4));
        string fifth = harness.Queue.Schedule(_ => { }, now.AddMinutes(5));

        Assert.True(harness.Queue.CancelScheduled(cancelled));
        Assert.Equal([due, third], harness.Control.GetScheduledJobs(2).Select(j => j.Job.Id));

        _time.Advance(TimeSpan.FromMinutes(1));
        await Wait.ForAsync(ran.Task, "the first job once due");
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Scheduled == 3, "the due job to leave the set");
        Assert.Equal([third, fourth], harness.Control.GetScheduledJobs(2).Select(j => j.Job.Id));
        Assert.Equal([third, fourth, fifth], harness.Control.GetScheduledJobs(int.MaxValue).Select(j => j.Job.Id));
    }

    [Fact]
    public async Task GetScheduledJobs_OtherQueueHasSoonerJobs_ListsOnlyItsOwn()
    {
        // Every queue of a provider shares one timer heap; the listing is the queue's own.
        await using var harness = QueueHarness.Start(
            o => { o.MinWorkers = 1; o.MaxWorkers = 1; },
            addQueues: b => b.AddQueue("other", o => { o.MinWorkers = 1; o.MaxWorkers = 1; }),
            addServices: s => s.AddSingleton(new WorkQueueEnvironment(_time, () => 0.5)));
        var other = harness.Services.GetRequiredService<IWorkQueueProvider>().GetInMemoryQueue("other");
        var now = _time.GetUtcNow();
        for (int i = 1; i <= 5; i++)
        {
            other.Schedule(_ => { }, now.AddSeconds(i));
        }

        string mine = harness.Queue.Schedule(_ => { }, now.AddHours(1));

        Assert.Equal([mine], harness.Control.GetScheduledJobs(3).Select(j => j.Job.Id));
    }

    [Fact]
    public async Task GetScheduledJobs_EmptyOrZero_ReturnsNothing_AndANegativeCountThrowsNamingIt()
    {
        await using var harness = Start();
        Assert.Empty(harness.Control.GetScheduledJobs(5));
        harness.Queue.Schedule(_ => { }, TimeSpan.FromMinutes(1));
        Assert.Empty(harness.Control.GetScheduledJobs(0));

        var ex = Assert.Throws<ArgumentOutOfRangeException>(() => harness.Control.GetScheduledJobs(-1));
        Assert.Equal("maxCount", ex.ParamName);
        ex = Assert.Throws<ArgumentOutOfRangeException>(() => harness.Control.GetScheduledJobs(int.MinValue));
        Assert.Equal("maxCount", ex.ParamName);
    }

    [Fact]
    public async Task GetScheduledJobs_FewOfManyJobs_AllocatesForTheJobsReturnedNotForEveryJobHeld()
    {
        // What the call allocates, not how long it takes: reading the soonest job of 10,000 must not copy the 10,000
        // (a copy alone is 8 bytes a job, 80,000 bytes here). Counted on this thread, where the call runs.
        const int Held = 10_000;
        await using var harness = Start(o => o.MaxScheduledJobs = Held);
        var now = _time.GetUtcNow();
        for (int i = 0; i < Held; i++)
        {
            harness.Queue.Schedule(_ => { }, now.AddSeconds(Held - i));
        }

        // Once first, so that what the first call alone allocates (a type's statics, say) is not counted.
        Assert.Single(harness.Control.GetScheduledJobs(1));
        long before = GC.GetAllocatedBytesForCurrentThread();
        var listed = harness.Control.GetScheduledJobs(1);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Equal(now.AddSeconds(1), Assert.Single(listed).DueAt);
        Assert.True(allocated < Held, $"GetScheduledJobs(1) allocated {allocated:N0} bytes with {Held:N0} jobs held.");
    }

    [Fact]
    public async Task Metrics_ScheduledGaugeAndCanceledCounter()
    {
        await using var harness = Start();
        var factory = harness.Services.GetRequiredService<System.Diagnostics.Metrics.IMeterFactory>();
        using var scheduled = new MetricCollector<int>(factory, WorkQueueMetrics.MeterName, "workqueue.queue.scheduled");
        using var canceled = new MetricCollector<long>(factory, WorkQueueMetrics.MeterName, "workqueue.job.canceled");
        string id = harness.Queue.Schedule(_ => { }, TimeSpan.FromMinutes(1));
        harness.Queue.Schedule(_ => { }, TimeSpan.FromMinutes(1));

        scheduled.RecordObservableInstruments();
        Assert.Equal(2, scheduled.LastMeasurement!.Value);
        Assert.True(harness.Queue.CancelScheduled(id));
        scheduled.RecordObservableInstruments();
        Assert.Equal(1, scheduled.LastMeasurement!.Value);
        Assert.Equal(1, Assert.Single(canceled.GetMeasurementSnapshot()).Value);
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

    private sealed class Handler(TaskCompletionSource ran) : IJobHandler<string>
    {
        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
        {
            ran.TrySetResult();
            return ValueTask.CompletedTask;
        }
    }

    private sealed class Recorder
    {
        private readonly ConcurrentQueue<string> _items = new();

        public IReadOnlyCollection<string> Items => _items;

        public void Add(string item) => _items.Enqueue(item);
    }

    private sealed class ScopedHandler(Recorder recorder) : IJobHandler<string>
    {
        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
        {
            recorder.Add(payload);
            return ValueTask.CompletedTask;
        }
    }
}
