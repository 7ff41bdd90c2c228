using Microsoft.Extensions.Time.Testing;
using WorkQueue.Internal;
using WorkQueue.Tracking;

namespace WorkQueue.Core.Tests.Tracking;

/// <summary>The job search over one tracker: state index, text scan bounded per page, cursors, pruning.</summary>
public sealed class JobTrackerQueryTests
{
    private static readonly Action<CancellationToken> Alpha = RunAlpha;
    private static readonly Action<CancellationToken> Beta = RunBeta;

    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2026, 11, 25, 15, 0, 0, TimeSpan.Zero));

    [Fact]
    public void Query_NoFilter_ListsJobsInFlightNewestFirstThenEndedLatestEndingFirst()
    {
        var tracker = NewTracker();
        var a = Track(tracker, 1);
        var b = Track(tracker, 2);
        var c = Track(tracker, 3);
        Track(tracker, 4);
        Track(tracker, 5);
        End(b, JobState.Succeeded);
        End(a, JobState.DeadLettered, "boom");
        End(c, JobState.Canceled);

        var page = tracker.Query(new JobQuery(), "q");

        Assert.Equal([5L, 4, 3, 1, 2], page.Jobs.Select(j => long.Parse(j.Id)));
        Assert.Null(page.Next);
        Assert.Equal("q", page.Jobs[0].QueueName);
    }

    [Fact]
    public void Query_StateFilter_ReadsOnlyThatStatesJobs()
    {
        var tracker = NewTracker();
        for (int id = 1; id <= 1000; id++)
        {
            End(Track(tracker, id), id % 100 == 0 ? JobState.DeadLettered : JobState.Succeeded, id % 100 == 0 ? "boom" : null);
        }

        var page = tracker.Query(new JobQuery { States = [JobState.DeadLettered], Limit = 500 }, "q");

        Assert.Equal(Enumerable.Range(1, 10).Reverse().Select(i => i * 100L), page.Jobs.Select(j => long.Parse(j.Id)));
        Assert.Equal(10, page.Scanned);
        Assert.Null(page.Next);
    }

    [Fact]
    public void Query_SeveralEndedStates_MergesTheirLogsByEnding()
    {
        var tracker = NewTracker();
        var states = new[] { JobState.Succeeded, JobState.Canceled, JobState.Dropped, JobState.Succeeded, JobState.DeadLettered, JobState.Canceled };
        for (int id = 1; id <= states.Length; id++)
        {
            End(Track(tracker, id), states[id - 1]);
        }

        var page = tracker.Query(new JobQuery { States = [JobState.Succeeded, JobState.Canceled], Limit = 2 }, "q");
        var rest = tracker.Query(new JobQuery { States = [JobState.Succeeded, JobState.Canceled], Limit = 2, Cursor = page.Next }, "q");

        Assert.Equal([6L, 4], page.Jobs.Select(j => long.Parse(j.Id)));
        Assert.Equal([2L, 1], rest.Jobs.Select(j => long.Parse(j.Id)));
        Assert.Null(rest.Next);
    }

    [Fact]
    public void Query_PagingAcrossJobsInFlightAndEnded_ListsEveryJobOnce()
    {
        var tracker = NewTracker();
        for (int id = 1; id <= 25; id++)
        {
            var job = Track(tracker, id);
            if (id % 2 == 0)
            {
                End(job, JobState.Succeeded);
            }
        }

        var seen = new List<long>();
        string? cursor = null;
        int pages = 0;
        do
        {
            var page = tracker.Query(new JobQuery { Limit = 4, Cursor = cursor }, "q");
            seen.AddRange(page.Jobs.Select(j => long.Parse(j.Id)));
            cursor = page.Next;
            pages++;
        }
        while (cursor is not null);

        Assert.Equal(25, seen.Count);
        Assert.Equal(Enumerable.Range(1, 25).Select(i => (long)i).Order(), seen.Order());
        Assert.Equal(Enumerable.Range(0, 13).Select(i => 25L - (2 * i)), seen.Take(13));
        Assert.Equal(7, pages);
    }

    [Fact]
    public void Query_TextSearch_StopsAtTheScanLimitAndContinuesFromItsCursor()
    {
        var tracker = NewTracker();
        for (int id = 1; id <= 100; id++)
        {
            End(Track(tracker, id), JobState.DeadLettered, id == 5 ? "Gateway TIMEOUT after 30 s" : "declined");
        }

        var first = tracker.Query(new JobQuery { ErrorContains = "timeout", ScanLimit = 60 }, "q");
        var second = tracker.Query(new JobQuery { ErrorContains = "timeout", ScanLimit = 60, Cursor = first.Next }, "q");

        Assert.Empty(first.Jobs);
        Assert.Equal(60, first.Scanned);
        Assert.NotNull(first.Next);
        Assert.Equal([5L], second.Jobs.Select(j => long.Parse(j.Id)));
        Assert.InRange(second.Scanned, 40, 60);
        Assert.Null(second.Next);
    }

    [Fact]
    public void Query_JobsInFlight_AreReadInBoundedStepsWithACursor()
    {
        var tracker = NewTracker();
        for (int id = 1; id <= 1000; id++)
        {
            var job = Track(tracker, id);
            if (id == 10)
            {
                Assert.True(job.TryStart(1, "w"));
            }
        }

        var first = tracker.Query(new JobQuery { States = [JobState.Running], ScanLimit = 600 }, "q");
        var second = tracker.Query(new JobQuery { States = [JobState.Running], ScanLimit = 600, Cursor = first.Next }, "q");

        Assert.Empty(first.Jobs);
        Assert.Equal(600, first.Scanned);
        Assert.StartsWith("l", first.Next);
        Assert.Equal([10L], second.Jobs.Select(j => long.Parse(j.Id)));
        Assert.Equal(400, second.Scanned);
        Assert.Null(second.Next);
    }

    [Fact]
    public void Track_AfterMostJobsEnded_CompactsTheLiveLogAndKeepsTheRestInOrder()
    {
        var tracker = NewTracker();
        for (int id = 1; id <= 1000; id++)
        {
            var job = Track(tracker, id);
            if (id % 10 != 0)
            {
                End(job, JobState.Canceled);
            }
        }

        var page = tracker.Query(new JobQuery { States = [JobState.Queued], Limit = 500 }, "q");

        Assert.Equal(Enumerable.Range(1, 100).Reverse().Select(i => i * 10L), page.Jobs.Select(j => long.Parse(j.Id)));
        Assert.InRange(page.Scanned, 100, 200);
    }

    [Fact]
    public void OnEnded_WithNoFurtherEnqueue_CompactsTheLiveLog()
    {
        var tracker = NewTracker();
        var jobs = Enumerable.Range(1, 1000).Select(id => Track(tracker, id)).ToList();

        foreach (var job in jobs)
        {
            End(job, JobState.Succeeded);
        }

        Assert.InRange(tracker.LiveLogCount, 0, 31);
    }

    [Fact]
    public void Query_NameContains_MatchesTheDelegatesNameIgnoringCase()
    {
        var tracker = NewTracker();
        tracker.Track(1, SyncDelegateInvoker.Instance, Alpha, key: null, runAt: null);
        tracker.Track(2, SyncDelegateInvoker.Instance, Beta, key: null, runAt: null);
        var ended = tracker.Track(3, SyncDelegateInvoker.Instance, Beta, key: null, runAt: null);
        End(ended, JobState.Succeeded);

        var page = tracker.Query(new JobQuery { NameContains = "BETA" }, "q");

        Assert.Equal([2L, 3], page.Jobs.Select(j => long.Parse(j.Id)));
    }

    [Fact]
    public void Query_LiveStateFilter_UsesTheCurrentState()
    {
        var tracker = NewTracker();
        var running = Track(tracker, 1);
        Assert.True(running.TryStart(1, "w"));
        Track(tracker, 2);
        var retrying = Track(tracker, 3);
        Assert.True(retrying.TryStart(1, "w"));
        Assert.True(retrying.TryMarkRetrying("flaky", _time.GetUtcNow().AddSeconds(1)));

        var page = tracker.Query(new JobQuery { States = [JobState.Running, JobState.Retrying] }, "q");

        Assert.Equal([3L, 1], page.Jobs.Select(j => long.Parse(j.Id)));
    }

    [Fact]
    public void Query_AfterTheRetentionOrCount_ForgetsTheOldestEndings()
    {
        var tracker = new JobTracker(_time, TimeSpan.FromMinutes(1), maxEnded: 3);
        for (int id = 1; id <= 5; id++)
        {
            End(Track(tracker, id), id % 2 == 0 ? JobState.Canceled : JobState.Succeeded);
        }

        Assert.Equal([5L, 4, 3], tracker.Query(new JobQuery(), "q").Jobs.Select(j => long.Parse(j.Id)));
        Assert.Equal([4L], tracker.Query(new JobQuery { States = [JobState.Canceled] }, "q").Jobs.Select(j => long.Parse(j.Id)));

        _time.Advance(TimeSpan.FromMinutes(1));

        Assert.Empty(tracker.Query(new JobQuery(), "q").Jobs);
        Assert.Empty(tracker.Query(new JobQuery { States = [JobState.Succeeded] }, "q").Jobs);
        Assert.Equal(0, tracker.Count);
    }

    [Fact]
    public void Query_ALiveJobWithAPayload_ReportsItUntilItEnds()
    {
        var tracker = NewTracker();
        var job = tracker.Track(1, HandlerInvoker<string>.Instance, new object(), key: null, runAt: null, payload: "order-42");

        Assert.Equal("order-42", tracker.Query(new JobQuery(), "q").Jobs.Single().Payload);

        End(job, JobState.Succeeded);
        Assert.Null(tracker.Query(new JobQuery(), "q").Jobs.Single().Payload);
    }

    private static void RunAlpha(CancellationToken cancellationToken)
    {
    }

    private static void RunBeta(CancellationToken cancellationToken)
    {
    }

    private JobTracker NewTracker() => new(_time, TimeSpan.FromMinutes(10), maxEnded: 100_000);

    private static TrackedJob Track(JobTracker tracker, long id) =>
        tracker.Track(id, SyncDelegateInvoker.Instance, Alpha, key: null, runAt: null);

    private void End(TrackedJob job, JobState ending, string? error = null)
    {
        if (ending is JobState.Succeeded or JobState.DeadLettered)
        {
            Assert.True(job.TryStart(1, "w"));
        }

        if (error is not null)
        {
            job.SetError(error);
        }

        Assert.True(job.TryEnd(ending));
    }
}
