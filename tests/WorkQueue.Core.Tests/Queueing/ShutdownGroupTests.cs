using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Queueing;

/// <summary>Queues that feed each other stop together: accepted work flows through to the end.</summary>
public sealed class ShutdownGroupTests(ITestOutputHelper output)
{
    [Fact]
    public async Task StopAsync_ChainedQueuesStoppedMidFlow_EveryAcceptedJobAndItsChildRun()
    {
        int childrenRun = 0, childrenRejected = 0, parentsRun = 0;
        await using var harness = QueueHarness.Start(
            o => { o.MinWorkers = 4; o.MaxWorkers = 4; o.Capacity = 2_000; },
            queues => queues.AddQueue("legacy", o => { o.MinWorkers = 1; o.MaxWorkers = 1; o.Capacity = 100_000; }));
        var legacy = harness.Provider.GetInMemoryQueue("legacy");
        var feeding = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        long accepted = 0;

        // Outside producer: enqueues parents (waiting for space) until the queue refuses; each parent hands a child to
        // 'legacy', which is slower, so children are queued and running when the stop begins.
        var producer = Task.Run(async () =>
        {
            while (true)
            {
                try
                {
                    await harness.Queue.EnqueueAsync(async _ =>
                    {
                        await Task.Yield();
                        Interlocked.Increment(ref parentsRun);
                        if (legacy.TryEnqueue(_ => { Thread.SpinWait(2_000); Interlocked.Increment(ref childrenRun); }))
                        {
                            return;
                        }

                        Interlocked.Increment(ref childrenRejected);
                    });
                }
                catch (JobRejectedException)
                {
                    return;
                }

                if (Interlocked.Increment(ref accepted) == 2_000)
                {
                    feeding.TrySetResult();
                }
            }
        });
        await Wait.ForAsync(feeding.Task, "2,000 parents accepted");

        var reports = await Wait.ForAsync(harness.Provider.StopAsync(Wait.Generous), "the stop");
        output.WriteLine($"accepted {accepted}, parents run {parentsRun}, children run {childrenRun}, children refused {childrenRejected}");
        await Wait.ForAsync(producer, "the producer to be refused");

        Assert.All(reports, r => Assert.True(r.Drained, $"queue '{r.QueueName}' did not drain"));
        Assert.All(reports, r => Assert.Empty(r.Abandoned));
        Assert.Equal(0, childrenRejected);
        Assert.Equal(accepted, parentsRun);
        Assert.Equal(accepted, childrenRun);
    }

    [Fact]
    public async Task StopAsync_DrainingQueue_RefusesOutsideWorkButAcceptsWorkFromRunningJobs()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 1; });
        using var gate = new Gate();
        var childRan = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        bool childAccepted = false;
        Assert.True(harness.Queue.TryEnqueue(ct =>
        {
            gate.Block(ct);
            childAccepted = harness.Queue.TryEnqueue(_ => childRan.SetResult());
        }));
        await Wait.ForAsync(gate.EnteredAsync(1), "the parent to run");

        var stopping = harness.Control.StopAsync(Wait.Generous);
        await Wait.UntilAsync(() => !harness.Control.GetSnapshot().IsAccepting, "the queue to start draining");
        Assert.False(harness.Queue.TryEnqueue(_ => { }));
        await Assert.ThrowsAsync<JobRejectedException>(() => harness.Queue.EnqueueAsync(_ => { }).AsTask());
        gate.Open();

        await Wait.ForAsync(childRan.Task, "the child enqueued by the running parent");
        var report = await Wait.ForAsync(stopping, "the drain");
        Assert.True(childAccepted);
        Assert.True(report.Drained);
        DefaultWorkQueueShutdownTests.AssertAccountingAddsUp(harness.Control.GetSnapshot().Totals, expectedEnqueued: 2);
    }

    [Fact]
    public async Task StopAsync_QueuesFeedingEachOtherInACycle_StopAtTheDeadlineAndReportWhatIsLeft()
    {
        await using var harness = QueueHarness.Start(
            o => { o.MinWorkers = 1; o.MaxWorkers = 1; },
            queues => queues.AddQueue("b", o => { o.MinWorkers = 1; o.MaxWorkers = 1; }));
        var b = harness.Provider.GetInMemoryQueue("b");
        var a = harness.Queue;
        var running = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Action<CancellationToken>? toB = null;
        Action<CancellationToken> toA = _ => { running.TrySetResult(); b.TryEnqueue(toB!); };
        toB = _ => a.TryEnqueue(toA);
        Assert.True(a.TryEnqueue(toA));
        await Wait.ForAsync(running.Task, "the ping-pong to run");

        var reports = await Wait.ForAsync(harness.Provider.StopAsync(TimeSpan.FromMilliseconds(200)), "the stop at the deadline");

        // The hand-off in flight at the deadline was either abandoned (reported) or refused to the job that made it.
        Assert.Equal(2, reports.Count);
        var totals = reports.Select(r => harness.Provider.Find(r.QueueName).Control.GetSnapshot().Totals).ToList();
        Assert.All(totals, t => Assert.Equal(0, t.Unfinished));
        Assert.All(totals, t => Assert.Equal(t.Enqueued, t.Succeeded + t.Abandoned));
        Assert.Equal(1, reports.Sum(r => r.Abandoned.Count) + totals.Sum(t => t.Rejected));
    }

    [Fact]
    public async Task StopAsync_ProviderThenQueue_ReturnTheSameReport()
    {
        await using var harness = QueueHarness.Start();

        var all = await Wait.ForAsync(harness.Provider.StopAsync(Wait.Generous), "the provider stop");
        var one = await Wait.ForAsync(harness.Control.StopAsync(TimeSpan.Zero), "the queue stop");

        Assert.Same(Assert.Single(all), one);
    }
}
