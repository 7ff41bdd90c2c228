using System.Collections.Concurrent;
using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Queueing;

/// <summary>The job search of an in-memory queue (<see cref="IWorkQueue.FindJobsAsync(JobQuery, CancellationToken)"/>): validation and a stress run.</summary>
public sealed class QueueRuntimeFindJobsTests
{
    public static TheoryData<JobQuery, string> InvalidQueries => new()
    {
        { new JobQuery { Limit = 0 }, "Limit" },
        { new JobQuery { Limit = JobQuery.MaxLimit + 1 }, "Limit" },
        { new JobQuery { ScanLimit = 0 }, "ScanLimit" },
        { new JobQuery { NameContains = string.Empty }, "NameContains" },
        { new JobQuery { ErrorContains = new string('x', JobQuery.MaxTextLength + 1) }, "ErrorContains" },
        { new JobQuery { States = [(JobState)42] }, "States" },
        { new JobQuery { Cursor = "x12" }, "Cursor" },
        { new JobQuery { Cursor = "l-1" }, "Cursor" },
    };

    [Theory]
    [MemberData(nameof(InvalidQueries))]
    public async Task FindJobsAsync_InvalidQuery_ThrowsNamingTheProperty(JobQuery query, string property)
    {
        await using var harness = QueueHarness.Start();

        var ex = await Assert.ThrowsAnyAsync<ArgumentException>(async () => await harness.Queue.FindJobsAsync(query));

        Assert.Equal("query", ex.ParamName);
        Assert.Contains($"JobQuery.{property}", ex.Message);
    }

    [Fact]
    public async Task FindJobsAsync_Null_Throws()
    {
        await using var harness = QueueHarness.Start();

        await Assert.ThrowsAsync<ArgumentNullException>("query", async () => await harness.Queue.FindJobsAsync(null!));
    }

    [Fact]
    public async Task FindJobsAsync_FailedAndSucceededJobs_FindsEachByStateAndError()
    {
        await using var harness = QueueHarness.Start(o => { o.Retry.MaxAttempts = 1; o.MaxWorkers = 1; o.MinWorkers = 1; });
        var handler = new Handler();
        var failed = await harness.Queue.EnqueueAsync(handler, -1, new JobOptions());
        var ok = await harness.Queue.EnqueueAsync(handler, 1, new JobOptions());
        await Wait.UntilAsync(async () => (await harness.Queue.GetJobAsync(ok.JobId))?.State == JobState.Succeeded && (await harness.Queue.GetJobAsync(failed.JobId))?.State == JobState.DeadLettered, "both jobs to end");

        var dead = (await harness.Queue.FindJobsAsync(new JobQuery { States = [JobState.DeadLettered] }));
        var byError = (await harness.Queue.FindJobsAsync(new JobQuery { ErrorContains = "NEGATIVE" }));
        var byName = (await harness.Queue.FindJobsAsync(new JobQuery { NameContains = nameof(Handler) }));

        Assert.Equal([failed.JobId], dead.Jobs.Select(j => j.Id));
        Assert.Equal([failed.JobId], byError.Jobs.Select(j => j.Id));
        Assert.Equal([ok.JobId, failed.JobId], byName.Jobs.Select(j => j.Id));
    }

    /// <summary>
    /// Producers enqueue tracked jobs that succeed or fail while readers page through every state (and, with a small
    /// <see cref="WorkQueueOptions.MaxFinishedJobs"/>, while the oldest endings are forgotten); a page of ended states
    /// holds only jobs of those states and no walk repeats a job outside the one race documented (a job listed in flight,
    /// then ended); afterwards the retained ended jobs are all found once.
    /// </summary>
    [Theory]
    [InlineData(1, 0)]
    [InlineData(2, 0)]
    [InlineData(3, 0)]
    [InlineData(4, 500)]
    [InlineData(5, 500)]
    [InlineData(6, 500)]
    public async Task FindJobsAsync_WhileJobsAreEnqueuedAndEnd_PagesStayConsistent(int seed, int maxFinished)
    {
        const int Producers = 4;
        const int JobsPerProducer = 2500;
        await using var harness = QueueHarness.Start(o =>
        {
            o.Capacity = Producers * JobsPerProducer;
            o.MinWorkers = 2;
            o.MaxWorkers = 2;
            o.AutoScale.Enabled = false;
            o.Retry.MaxAttempts = 1;
            o.MaxFinishedJobs = maxFinished == 0 ? Producers * JobsPerProducer : maxFinished;
        });
        var handler = new Handler();
        var failures = new ConcurrentDictionary<string, bool>();
        using var done = new CancellationTokenSource();
        var producers = Enumerable.Range(0, Producers).Select(p => Task.Run(async () =>
        {
            var random = new Random((seed * 17) + p);
            for (int i = 0; i < JobsPerProducer; i++)
            {
                bool fail = random.Next(5) == 0;
                var result = await harness.Queue.EnqueueAsync(handler, fail ? -1 : 1, new JobOptions());
                failures[result.JobId] = fail;
            }
        })).ToArray();

        var states = new JobState[][] { [], [JobState.DeadLettered], [JobState.Succeeded, JobState.Queued], [JobState.Running] };
        var readers = states.Select(filter => Task.Run(async () =>
        {
            int pagesRead = 0;
            bool endedOnly = filter.Length > 0 && filter.All(s => s >= JobState.Succeeded);
            bool liveOnly = filter.Length > 0 && filter.All(s => s < JobState.Succeeded);
            bool mixed = !endedOnly && !liveOnly;
            while (!done.IsCancellationRequested || pagesRead == 0)
            {
                string? cursor = null;
                var seen = new HashSet<string>();
                do
                {
                    var page = await harness.Queue.FindJobsAsync(new JobQuery { States = filter, Limit = 37, Cursor = cursor, ErrorContains = filter is [JobState.DeadLettered] ? "negative" : null });
                    pagesRead++;
                    foreach (var job in page.Jobs)
                    {
                        // An ended state is final; a job in flight may have moved on by the time it is described.
                        if (endedOnly)
                        {
                            Assert.Contains(job.State, filter);
                        }

                        // Only a filter that spans both parts can meet a job twice (listed in flight, then ended).
                        Assert.True(seen.Add(job.Id) || mixed, $"job {job.Id} listed twice");
                    }

                    cursor = page.Next;
                }
                while (cursor is not null);
            }
        })).ToArray();

        await Task.WhenAll(producers);
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Unfinished == 0, "every job to end");
        await done.CancelAsync();
        await Task.WhenAll(readers);

        var deadLettered = await AllPagesAsync(harness.Queue, new JobQuery { States = [JobState.DeadLettered], Limit = 500 });
        var succeeded = await AllPagesAsync(harness.Queue, new JobQuery { States = [JobState.Succeeded], Limit = 500 });
        var everything = await AllPagesAsync(harness.Queue, new JobQuery { Limit = 500 });
        if (maxFinished == 0)
        {
            Assert.Equal(failures.Where(f => f.Value).Select(f => f.Key).Order(), deadLettered.Order());
            Assert.Equal(failures.Where(f => !f.Value).Select(f => f.Key).Order(), succeeded.Order());
            Assert.Equal(failures.Keys.Order(), everything.Order());
        }
        else
        {
            // The last MaxFinishedJobs endings, each in the index of its own state.
            Assert.Equal(maxFinished, everything.Distinct().Count());
            Assert.Equal(everything.Order(), deadLettered.Concat(succeeded).Order());
            Assert.All(deadLettered, id => Assert.True(failures[id]));
            Assert.All(succeeded, id => Assert.False(failures[id]));
        }
    }

    private static async Task<List<string>> AllPagesAsync(IWorkQueue queue, JobQuery first)
    {
        var ids = new List<string>();
        string? cursor = null;
        do
        {
            var page = await queue.FindJobsAsync(new JobQuery { States = first.States, Limit = first.Limit, Cursor = cursor });
            ids.AddRange(page.Jobs.Select(j => j.Id));
            cursor = page.Next;
        }
        while (cursor is not null);

        return ids;
    }

    private sealed class Handler : IJobHandler<int>
    {
        public ValueTask ExecuteAsync(int payload, CancellationToken cancellationToken) =>
            payload < 0 ? throw new InvalidOperationException("The payload is negative.") : ValueTask.CompletedTask;
    }
}
