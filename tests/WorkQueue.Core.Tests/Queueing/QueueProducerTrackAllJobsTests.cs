using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Queueing;

/// <summary>
/// <see cref="WorkQueueOptions.TrackAllJobs"/>: a queue that tracks every job shows the jobs of every kind of enqueue in
/// its status and search, not only those whose id was handed out; one that does not keeps the untracked fast path.
/// </summary>
public sealed class QueueProducerTrackAllJobsTests
{
    [Fact]
    public async Task TrackAllJobs_EnqueuesWithoutOptions_AreFoundByTheSearchAndEnd()
    {
        await using var harness = QueueHarness.Start(o => o.TrackAllJobs = true);
        using var done = new CountdownEvent(4);

        Assert.True(harness.Queue.TryEnqueue(_ => done.Signal()));
        Assert.True(harness.Queue.TryEnqueue(new SignalHandler(done), 1));
        await harness.Queue.EnqueueAsync(_ => done.Signal());
        await harness.Queue.EnqueueAsync(new SignalHandler(done), 2);
        Assert.True(done.Wait(TimeSpan.FromSeconds(30)), "the four jobs to run");

        await Wait.UntilAsync(async () => (await harness.Queue.FindJobsAsync(new JobQuery { States = [JobState.Succeeded] })).Jobs.Count == 4, "the four jobs to be listed as succeeded");
        var jobs = (await harness.Queue.FindJobsAsync(new JobQuery())).Jobs;
        foreach (var job in jobs)
        {
            Assert.Equal(job, await harness.Queue.GetJobAsync(job.Id));
        }
        Assert.Equal(2, jobs.Count(j => j.Name.Contains(nameof(SignalHandler), StringComparison.Ordinal)));
    }

    [Fact]
    public async Task TrackAllJobs_Off_EnqueuesWithoutOptionsAreNotTracked()
    {
        await using var harness = QueueHarness.Start();
        using var done = new CountdownEvent(2);

        Assert.True(harness.Queue.TryEnqueue(_ => done.Signal()));
        await harness.Queue.EnqueueAsync(new SignalHandler(done), 1);
        Assert.True(done.Wait(TimeSpan.FromSeconds(30)), "the two jobs to run");
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Succeeded == 2, "the two successes to be counted");

        Assert.Empty((await harness.Queue.FindJobsAsync(new JobQuery())).Jobs);
    }

    [Fact]
    public async Task TrackAllJobs_TryEnqueueRefusedWhenFull_LeavesNoTrackedJob()
    {
        await using var harness = QueueHarness.Start(o =>
        {
            o.TrackAllJobs = true;
            o.Capacity = 1;
            o.FullMode = QueueFullMode.Reject;
            o.MinWorkers = 1;
            o.MaxWorkers = 1;
            o.AutoScale.Enabled = false;
        });
        harness.Control.Pause();

        Assert.True(harness.Queue.TryEnqueue(_ => { }));
        Assert.False(harness.Queue.TryEnqueue(_ => { }));

        var listed = (await harness.Queue.FindJobsAsync(new JobQuery())).Jobs;
        Assert.Equal(JobState.Queued, Assert.Single(listed).State);
        harness.Control.Resume();
    }

    private sealed class SignalHandler(CountdownEvent done) : IJobHandler<int>
    {
        public ValueTask ExecuteAsync(int payload, CancellationToken cancellationToken)
        {
            done.Signal();
            return ValueTask.CompletedTask;
        }
    }
}
