using System.Collections.Concurrent;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.Metrics.Testing;
using Microsoft.Extensions.Time.Testing;
using WorkQueue.Core.Tests.TestSupport;
using WorkQueue.Internal;
using WorkQueue.Telemetry;

namespace WorkQueue.Core.Tests.Scheduling;

/// <summary>Delayed jobs on an in-memory queue (<see cref="IWorkQueue.Schedule(Action{CancellationToken}, DateTimeOffset)"/>), on a <see cref="FakeTimeProvider"/>.</summary>
public sealed class ScheduledJobTests
{
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2026, 11, 25, 2, 0, 0, TimeSpan.Zero));

    [Fact]
    public async Task Schedule_Delay_RunsOnlyOnceTheDelayHasPassed()
    {
        await using var harness = Start();
        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        long id = harness.Queue.Schedule(_ => ran.SetResult(), TimeSpan.FromMinutes(30));

        Assert.Equal(1, harness.Control.GetSnapshot().Scheduled);
        _time.Advance(TimeSpan.FromMinutes(29.99));
        Assert.False(ran.Task.IsCompleted);
        Assert.Equal(1, harness.Control.GetSnapshot().Scheduled);

        _time.Advance(TimeSpan.FromSeconds(1));
        await Wait.ForAsync(ran.Task, "the job once due");
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Succeeded == 1, "the success is counted");
        var snapshot = harness.Control.GetSnapshot();
        Assert.Equal((0, 1L, 0L), (snapshot.Scheduled, snapshot.Totals.Enqueued, snapshot.Totals.Unfinished));
        Assert.True(id > 0);
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
    public async Task CancelScheduled_BeforeItsTime_NeverRunsAndCountsAsCanceled()
    {
        await using var harness = Start();
        int runs = 0;
        long id = harness.Queue.Schedule(_ => Interlocked.Increment(ref runs), TimeSpan.FromMinutes(1));
        var kept = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        harness.Queue.Schedule(_ => kept.SetResult(), TimeSpan.FromMinutes(1));

        Assert.True(harness.Queue.CancelScheduled(id));
        Assert.False(harness.Queue.CancelScheduled(id));
        Assert.False(harness.Queue.CancelScheduled(12345));

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
        long id = harness.Queue.Schedule(_ => ran.SetResult(), TimeSpan.FromSeconds(1));
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
        long id = harness.Queue.Schedule(_ => { }, DateTimeOffset.MaxValue);
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
        long first = harness.Queue.Schedule(_ => Interlocked.Increment(ref runs), TimeSpan.FromHours(1));
        long second = harness.Queue.Schedule<string>(new Handler(new TaskCompletionSource()), "p", TimeSpan.FromHours(2));

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
        long late = harness.Queue.Schedule<string>(new Handler(new TaskCompletionSource()), "late", now.AddHours(2));
        long soon = harness.Queue.Schedule<string>(new Handler(new TaskCompletionSource()), "soon", now.AddMinutes(5));
        long middle = harness.Queue.Schedule<string>(new Handler(new TaskCompletionSource()), "middle", now.AddHours(1));

        var listed = harness.Control.GetScheduledJobs(2);
        Assert.Equal([soon, middle], listed.Select(j => j.Job.Id));
        Assert.Equal(now.AddMinutes(5), listed[0].DueAt);
        Assert.Equal(now, listed[0].ScheduledAt);
        Assert.Equal("soon", listed[0].Job.Payload);
        Assert.Equal(3, harness.Control.GetScheduledJobs(100).Count);
        Assert.Throws<ArgumentOutOfRangeException>(() => harness.Control.GetScheduledJobs(-1));
        Assert.True(harness.Queue.CancelScheduled(late));
    }

    [Fact]
    public async Task Metrics_ScheduledGaugeAndCanceledCounter()
    {
        await using var harness = Start();
        var factory = harness.Services.GetRequiredService<System.Diagnostics.Metrics.IMeterFactory>();
        using var scheduled = new MetricCollector<int>(factory, WorkQueueMetrics.MeterName, "workqueue.queue.scheduled");
        using var canceled = new MetricCollector<long>(factory, WorkQueueMetrics.MeterName, "workqueue.job.canceled");
        long id = harness.Queue.Schedule(_ => { }, TimeSpan.FromMinutes(1));
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
