using System.Collections.Concurrent;
using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Queueing;

public sealed class DefaultWorkQueueTests
{
    private static void OneWorker(WorkQueueOptions o)
    {
        o.MinWorkers = 1;
        o.MaxWorkers = 1;
        o.AutoScale.Enabled = false;
    }

    [Fact]
    public async Task TryEnqueue_OneWorker_RunsJobsInEnqueueOrder()
    {
        await using var harness = QueueHarness.Start(OneWorker);
        var order = new ConcurrentQueue<int>();
        var done = new CountdownSignal(200);
        for (int i = 0; i < 200; i++)
        {
            int n = i;
            Assert.True(harness.Queue.TryEnqueue(_ => { order.Enqueue(n); done.Signal(); }));
        }

        await Wait.ForAsync(done.Task, "200 jobs");
        Assert.Equal(Enumerable.Range(0, 200), order);
    }

    [Fact]
    public async Task TryEnqueue_AsyncDelegateAndHandlers_AllRun()
    {
        await using var harness = QueueHarness.Start();
        var done = new CountdownSignal(2);
        var handler = new RecordingHandler(done);

        Assert.True(harness.Queue.TryEnqueue(async ct => { await Task.Yield(); done.Signal(); }));
        Assert.True(harness.Queue.TryEnqueue(handler, "payload"));

        await Wait.ForAsync(done.Task, "an async delegate job and a handler job");
        Assert.Equal(["payload"], handler.Payloads);
    }

    [Fact]
    public async Task Enqueue_NullArguments_ThrowArgumentNullExceptionNamingParameter()
    {
        await using var harness = QueueHarness.Start();
        var queue = harness.Queue;
        var control = harness.Control;

        Assert.Equal("job", Assert.Throws<ArgumentNullException>(() => queue.TryEnqueue((Action<CancellationToken>)null!)).ParamName);
        Assert.Equal("job", Assert.Throws<ArgumentNullException>(() => queue.TryEnqueue((Func<CancellationToken, ValueTask>)null!)).ParamName);
        Assert.Equal("handler", Assert.Throws<ArgumentNullException>(() => queue.TryEnqueue<string>(null!, "x")).ParamName);
        Assert.Equal("job", (await Assert.ThrowsAsync<ArgumentNullException>(async () => await queue.EnqueueAsync((Action<CancellationToken>)null!))).ParamName);
    }

    [Fact]
    public async Task TryEnqueue_WaitModeFull_ReturnsFalseAndCountsRejection()
    {
        await using var harness = QueueHarness.Start(o => { OneWorker(o); o.Capacity = 2; });
        using var gate = new Gate();
        var queue = harness.Queue;
        var control = harness.Control;

        Assert.True(queue.TryEnqueue(gate.Block));
        await Wait.ForAsync(gate.EnteredAsync(1), "the worker to be busy");
        Assert.True(queue.TryEnqueue(gate.Block));
        Assert.True(queue.TryEnqueue(gate.Block));

        Assert.False(queue.TryEnqueue(gate.Block));

        var snapshot = control.GetSnapshot();
        Assert.Equal(2, snapshot.Depth);
        Assert.Equal(3, snapshot.Totals.Enqueued);
        Assert.Equal(1, snapshot.Totals.Rejected);
    }

    [Fact]
    public async Task EnqueueAsync_WaitModeFull_WaitsForSpaceThenRuns()
    {
        await using var harness = QueueHarness.Start(o => { OneWorker(o); o.Capacity = 1; });
        using var gate = new Gate();
        var queue = harness.Queue;
        var control = harness.Control;
        Assert.True(queue.TryEnqueue(gate.Block));
        await Wait.ForAsync(gate.EnteredAsync(1), "the worker to be busy");
        Assert.True(queue.TryEnqueue(gate.Block));
        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        var pending = queue.EnqueueAsync(_ => ran.SetResult()).AsTask();
        Assert.False(pending.IsCompleted);

        gate.Open();
        await Wait.ForAsync(pending, "the waiting enqueue to be accepted");
        await Wait.ForAsync(ran.Task, "the job that waited for space to run");
        Assert.Equal(0, control.GetSnapshot().Totals.Rejected);
    }

    [Fact]
    public async Task EnqueueAsync_WaitCancelled_ThrowsOperationCanceledAndQueueKeepsWorking()
    {
        await using var harness = QueueHarness.Start(o => { OneWorker(o); o.Capacity = 1; });
        using var gate = new Gate();
        var queue = harness.Queue;
        var control = harness.Control;
        Assert.True(queue.TryEnqueue(gate.Block));
        await Wait.ForAsync(gate.EnteredAsync(1), "the worker to be busy");
        Assert.True(queue.TryEnqueue(gate.Block));
        using var cts = new CancellationTokenSource();

        var pending = queue.EnqueueAsync(_ => throw new InvalidOperationException("must never run"), cts.Token).AsTask();
        cts.Cancel();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => pending);
        gate.Open();
        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await queue.EnqueueAsync(_ => ran.SetResult());
        await Wait.ForAsync(ran.Task, "a later job");
        var totals = control.GetSnapshot().Totals;
        Assert.Equal(1, totals.Rejected);
        Assert.Equal(0, totals.DeadLettered);
    }

    [Fact]
    public async Task EnqueueAsync_TokenAlreadyCancelled_ThrowsAndCountsOneRejection()
    {
        await using var harness = QueueHarness.Start();
        using var cts = new CancellationTokenSource();
        cts.Cancel();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await harness.Queue.EnqueueAsync(_ => { }, cts.Token));

        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((0L, 1L), (totals.Enqueued, totals.Rejected));
    }

    [Fact]
    public async Task EnqueueAsync_WaitTimesOut_ThrowsJobRejectedQueueFull()
    {
        await using var harness = QueueHarness.Start(o => { OneWorker(o); o.Capacity = 1; o.EnqueueTimeout = TimeSpan.FromMilliseconds(50); });
        using var gate = new Gate();
        var queue = harness.Queue;
        var control = harness.Control;
        Assert.True(queue.TryEnqueue(gate.Block));
        await Wait.ForAsync(gate.EnteredAsync(1), "the worker to be busy");
        Assert.True(queue.TryEnqueue(gate.Block));

        var ex = await Assert.ThrowsAsync<JobRejectedException>(async () => await queue.EnqueueAsync(_ => { }));

        Assert.Equal(RejectionReason.QueueFull, ex.Reason);
        Assert.Contains("EnqueueTimeout", ex.Message);
    }

    [Fact]
    public async Task Enqueue_RejectModeFull_TryReturnsFalseAndAsyncThrowsAtOnce()
    {
        await using var harness = QueueHarness.Start(o => { OneWorker(o); o.Capacity = 1; o.FullMode = QueueFullMode.Reject; });
        using var gate = new Gate();
        var queue = harness.Queue;
        var control = harness.Control;
        Assert.True(queue.TryEnqueue(gate.Block));
        await Wait.ForAsync(gate.EnteredAsync(1), "the worker to be busy");
        Assert.True(queue.TryEnqueue(gate.Block));

        Assert.False(queue.TryEnqueue(gate.Block));
        var ex = await Assert.ThrowsAsync<JobRejectedException>(async () => await queue.EnqueueAsync(gate.Block));

        Assert.Equal(RejectionReason.QueueFull, ex.Reason);
        Assert.Equal(WorkQueueOptions.DefaultQueueName, ex.QueueName);
        Assert.Equal(2, control.GetSnapshot().Totals.Rejected);
    }

    [Fact]
    public async Task TryEnqueue_DropOldestModeFull_DropsOldestReportsItAndRunsTheRest()
    {
        var dropped = new ConcurrentQueue<JobInfo>();
        var ran = new ConcurrentQueue<string>();
        var done = new CountdownSignal(2);
        var handler = new RecordingHandler(done, ran);
        await using var harness = QueueHarness.Start(o =>
        {
            OneWorker(o);
            o.Capacity = 2;
            o.FullMode = QueueFullMode.DropOldest;
            o.OnJobDropped = dropped.Enqueue;
        });
        using var gate = new Gate();
        var queue = harness.Queue;
        var control = harness.Control;
        Assert.True(queue.TryEnqueue(gate.Block));
        await Wait.ForAsync(gate.EnteredAsync(1), "the worker to be busy");

        Assert.True(queue.TryEnqueue(handler, "first"));
        Assert.True(queue.TryEnqueue(handler, "second"));
        Assert.True(queue.TryEnqueue(handler, "third"));
        gate.Open();

        await Wait.ForAsync(done.Task, "the two kept jobs");
        var drop = Assert.Single(dropped);
        Assert.Equal("first", drop.Payload);
        Assert.Equal(["second", "third"], ran);
        var totals = control.GetSnapshot().Totals;
        Assert.Equal(1, totals.Dropped);
        Assert.Equal(4, totals.Enqueued);
    }

    [Fact]
    public async Task Execute_ThrowingJob_DoesNotKillItsWorker()
    {
        await using var harness = QueueHarness.Start(OneWorker);
        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        Assert.True(harness.Queue.TryEnqueue(_ => throw new InvalidOperationException("boom")));
        Assert.True(harness.Queue.TryEnqueue(async _ => { await Task.Yield(); throw new InvalidOperationException("async boom"); }));
        Assert.True(harness.Queue.TryEnqueue(_ => ran.SetResult()));

        await Wait.ForAsync(ran.Task, "a job after two failures");
        var snapshot = harness.Control.GetSnapshot();
        Assert.Equal(1, snapshot.Workers);
        Assert.Equal(2, snapshot.Totals.DeadLettered);
    }

    [Fact]
    public async Task Execute_AlwaysFails_RetriesThenDeadLettersWithLastException()
    {
        var deadLettered = new TaskCompletionSource<DeadLetteredJob>(TaskCreationOptions.RunContinuationsAsynchronously);
        int attempts = 0;
        await using var harness = QueueHarness.Start(o =>
        {
            o.Retry.MaxAttempts = 3;
            o.Retry.BaseDelay = TimeSpan.FromMilliseconds(1);
            o.Retry.MaxDelay = TimeSpan.FromMilliseconds(5);
            o.OnJobDeadLettered = job => deadLettered.SetResult(job);
        });

        Assert.True(harness.Queue.TryEnqueue(_ => throw new InvalidOperationException($"attempt {Interlocked.Increment(ref attempts)}")));

        var job = await Wait.ForAsync(deadLettered.Task, "the job to be dead-lettered");
        Assert.Equal(3, attempts);
        Assert.Equal(3, job.Job.Attempt);
        Assert.Equal("attempt 3", job.Exception.Message);
        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((3, 2, 1, 0L), (totals.Failed, totals.Retried, totals.DeadLettered, totals.Succeeded));
        Assert.Single(harness.Control.GetDeadLetters());
    }

    [Fact]
    public async Task Execute_FailsOnceWithRetries_SucceedsOnSecondAttempt()
    {
        int attempts = 0;
        var succeeded = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var harness = QueueHarness.Start(o => { o.Retry.MaxAttempts = 5; o.Retry.BaseDelay = TimeSpan.FromMilliseconds(1); });

        Assert.True(harness.Queue.TryEnqueue(_ =>
        {
            if (Interlocked.Increment(ref attempts) == 1)
            {
                throw new TimeoutException("transient");
            }

            succeeded.SetResult();
        }));

        await Wait.ForAsync(succeeded.Task, "the second attempt");
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Succeeded == 1, "the success is counted");
        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((1, 1, 0L), (totals.Failed, totals.Retried, totals.DeadLettered));
    }

    [Fact]
    public async Task Execute_ShouldRetryRejectsException_DeadLettersAfterFirstAttempt()
    {
        var deadLettered = new TaskCompletionSource<DeadLetteredJob>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var harness = QueueHarness.Start(o =>
        {
            o.Retry.MaxAttempts = 5;
            o.Retry.ShouldRetry = ex => ex is not ArgumentException;
            o.OnJobDeadLettered = job => deadLettered.SetResult(job);
        });

        Assert.True(harness.Queue.TryEnqueue(_ => throw new ArgumentException("permanent")));

        var job = await Wait.ForAsync(deadLettered.Task, "the job to be dead-lettered");
        Assert.Equal(1, job.Job.Attempt);
        Assert.Equal(0, harness.Control.GetSnapshot().Totals.Retried);
    }

    [Fact]
    public async Task Execute_JobExceedsTimeout_TokenCancelledAndDeadLetteredAsTimeout()
    {
        var deadLettered = new TaskCompletionSource<DeadLetteredJob>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var harness = QueueHarness.Start(o =>
        {
            o.JobTimeout = TimeSpan.FromMilliseconds(50);
            o.OnJobDeadLettered = job => deadLettered.SetResult(job);
        });

        Assert.True(harness.Queue.TryEnqueue(async ct => await Task.Delay(Timeout.Infinite, ct)));

        var job = await Wait.ForAsync(deadLettered.Task, "the timed-out job");
        var timeout = Assert.IsType<TimeoutException>(job.Exception);
        Assert.IsAssignableFrom<OperationCanceledException>(timeout.InnerException);
    }

    [Fact]
    public async Task DeadLetters_MoreThanCapacity_KeepsMostRecentButCountsAll()
    {
        var done = new CountdownSignal(5);
        await using var harness = QueueHarness.Start(o =>
        {
            OneWorker(o);
            o.DeadLetterCapacity = 2;
            o.OnJobDeadLettered = _ => done.Signal();
        });
        var handler = new ThrowingHandler();
        for (int i = 0; i < 5; i++)
        {
            Assert.True(harness.Queue.TryEnqueue(handler, i));
        }

        await Wait.ForAsync(done.Task, "five dead letters");
        Assert.Equal([3, 4], harness.Control.GetDeadLetters().Select(d => (int)d.Job.Payload!));
        Assert.Equal(5, harness.Control.GetSnapshot().Totals.DeadLettered);
    }

    [Fact]
    public async Task GetSnapshot_AfterJobs_ReportsLatencyPercentiles()
    {
        var done = new CountdownSignal(20);
        await using var harness = QueueHarness.Start();
        for (int i = 0; i < 20; i++)
        {
            Assert.True(harness.Queue.TryEnqueue(_ => done.Signal()));
        }

        await Wait.ForAsync(done.Task, "20 jobs");
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().RunTime.Samples == 20, "all run times are recorded");
        var snapshot = harness.Control.GetSnapshot();
        Assert.Equal(20, snapshot.QueueWait.Samples);
        Assert.True(snapshot.QueueWait.P50 <= snapshot.QueueWait.P95 && snapshot.QueueWait.P95 <= snapshot.QueueWait.Max);
        Assert.Equal(WorkQueueOptions.DefaultQueueName, snapshot.Name);
        Assert.Equal(10_000, snapshot.Capacity);
    }

    private sealed class RecordingHandler(CountdownSignal done, ConcurrentQueue<string>? log = null) : IJobHandler<string>
    {
        public ConcurrentQueue<string> Payloads { get; } = log ?? new();

        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
        {
            Payloads.Enqueue(payload);
            done.Signal();
            return default;
        }
    }

    private sealed class ThrowingHandler : IJobHandler<int>
    {
        public ValueTask ExecuteAsync(int payload, CancellationToken cancellationToken) =>
            throw new InvalidOperationException($"job {payload} failed");
    }
}
