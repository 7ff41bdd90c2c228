using Microsoft.Extensions.Time.Testing;
using WorkQueue.Internal;
using WorkQueue.Tracking;

namespace WorkQueue.Core.Tests.Tracking;

/// <summary>The tracked job's state machine on its own: who wins each race between a cancel and the job's other moves.</summary>
public sealed class TrackedJobTests
{
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2026, 11, 25, 15, 0, 0, TimeSpan.Zero));

    [Fact]
    public void TryStart_AfterACancelBeforeStart_Fails()
    {
        var job = Track();

        Assert.True(job.TryEnd(JobState.Canceled, beforeStartOnly: true));

        Assert.False(job.TryStart(1, "w"));
        Assert.False(job.TryMarkQueued());
        Assert.Equal((JobState.Canceled, 0), (job.State, job.Describe("q").Attempt));
    }

    [Fact]
    public void CancelBeforeStart_OfARunningJob_Fails()
    {
        var job = Track();
        Assert.True(job.TryStart(1, "w"));

        Assert.False(job.TryEnd(JobState.Canceled, beforeStartOnly: true));
        Assert.Equal(JobState.Running, job.State);
    }

    [Fact]
    public void TryEnd_Twice_OnlyTheFirstCounts()
    {
        var job = Track();
        Assert.True(job.TryStart(1, "w"));

        Assert.True(job.TryEnd(JobState.Succeeded));
        Assert.False(job.TryEnd(JobState.Abandoned));
        Assert.False(job.TryEnd(JobState.Canceled));
        Assert.Equal(JobState.Succeeded, job.State);
    }

    [Fact]
    public void TryMarkRetrying_AfterACancelWasRequested_ReturnsFalseAndTheJobCanStillBeCancelledOnce()
    {
        var job = Track();
        Assert.True(job.TryStart(1, "w"));
        job.RequestCancel();

        Assert.False(job.TryMarkRetrying("boom", _time.GetUtcNow().AddSeconds(1)));

        Assert.Equal(JobState.Retrying, job.State);
        Assert.True(job.TryEnd(JobState.Canceled, beforeStartOnly: true));
        Assert.False(job.TryEnd(JobState.Canceled, beforeStartOnly: true));
    }

    [Fact]
    public void Cancellation_RequestedBeforeOrAfterTheTokenIsAttached_CancelsIt()
    {
        var before = Track();
        before.TryStart(1, "w");
        before.RequestCancel();
        using var early = new CancellationTokenSource();
        before.AttachCancellation(early);

        var after = Track();
        after.TryStart(1, "w");
        using var late = new CancellationTokenSource();
        after.AttachCancellation(late);
        after.RequestCancel();

        Assert.True(early.IsCancellationRequested);
        Assert.True(late.IsCancellationRequested);
    }

    [Fact]
    public void Describe_AfterTheJobEnded_KeepsItsNameButNotItsTarget()
    {
        Action<CancellationToken> job = _ => { };
        var tracked = new JobTracker(_time, TimeSpan.FromMinutes(1), 10).Track(7, SyncDelegateInvoker.Instance, job, key: null, runAt: null);
        string name = tracked.Describe("q").Name;

        tracked.TryEnd(JobState.Canceled, beforeStartOnly: true);

        Assert.Equal(name, tracked.Describe("q").Name);
        Assert.Contains(nameof(Describe_AfterTheJobEnded_KeepsItsNameButNotItsTarget), name);
    }

    private TrackedJob Track() => new JobTracker(_time, TimeSpan.FromMinutes(1), 10).Track(1, SyncDelegateInvoker.Instance, (Action<CancellationToken>)(_ => { }), key: null, runAt: null);
}
