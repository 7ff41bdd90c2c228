using WorkQueue.AspNetCore.Durable;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// When the store's round trims the ended-job lists: at most every interval, on a round that acknowledges, after a job
/// ended here otherwise, for an instance that takes no jobs, and for an idle one once the last trim's answer (or a
/// heartbeat interval) has passed. Timestamps here are milliseconds (a frequency of 1,000 a second).
/// </summary>
public sealed class TrimScheduleTests
{
    private static readonly TimeSpan Heartbeat = TimeSpan.FromSeconds(5);

    [Fact]
    public void IsDue_NeverTrimmed_DueForAnyRound()
    {
        var trim = New();

        Assert.True(trim.IsDue(now: 0, acknowledging: false, taking: true));
    }

    [Fact]
    public void IsDue_WithinTheIntervalOfATrim_NotDueWhateverHappened()
    {
        var trim = New();
        trim.Trimmed(sentAt: 1_000, againMs: 0);
        trim.Ended();

        Assert.False(trim.IsDue(now: 1_099, acknowledging: true, taking: false));
        Assert.True(trim.IsDue(now: 1_100, acknowledging: true, taking: true));
    }

    [Fact]
    public void IsDue_IdleAfterTheInterval_DueOnlyOnceTheTrimsAnswerHasPassed()
    {
        var trim = New();
        trim.Trimmed(sentAt: 1_000, againMs: 2_000);

        Assert.False(trim.IsDue(now: 2_999, acknowledging: false, taking: true));
        Assert.True(trim.IsDue(now: 2_999, acknowledging: true, taking: true));
        Assert.True(trim.IsDue(now: 2_999, acknowledging: false, taking: false));
        Assert.True(trim.IsDue(now: 3_000, acknowledging: false, taking: true));
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(5_000)]
    [InlineData(60_000)]
    public void IsDue_IdleWithNoRecordListedOrOneDueLater_DueAHeartbeatAfterTheTrim(long againMs)
    {
        var trim = New();
        trim.Trimmed(sentAt: 1_000, againMs);

        Assert.False(trim.IsDue(now: 5_999, acknowledging: false, taking: true));
        Assert.True(trim.IsDue(now: 6_000, acknowledging: false, taking: true));
    }

    [Fact]
    public void Ended_AfterTheInterval_TheNextRoundTrims()
    {
        var trim = New();
        trim.Trimmed(sentAt: 1_000, againMs: -1);

        trim.Ended();

        Assert.True(trim.IsDue(now: 1_100, acknowledging: false, taking: true));
    }

    [Fact]
    public void RoundSending_ATrim_ClearsTheEndingUntilAnotherEnds()
    {
        var trim = New();
        trim.Ended();
        trim.RoundSending(trim: true, acknowledging: false);
        trim.Trimmed(sentAt: 1_000, againMs: -1);

        Assert.False(trim.IsDue(now: 1_100, acknowledging: false, taking: true));

        trim.Ended();
        Assert.True(trim.IsDue(now: 1_100, acknowledging: false, taking: true));
    }

    [Fact]
    public void RoundSending_AcknowledgementsWithoutATrim_TheNextRoundTrims()
    {
        var trim = New();
        trim.Trimmed(sentAt: 1_000, againMs: -1);

        trim.RoundSending(trim: false, acknowledging: true);

        Assert.True(trim.IsDue(now: 1_100, acknowledging: false, taking: true));
    }

    [Fact]
    public void RoundFailed_ATrimThatFailed_TheNextRoundTrims()
    {
        var trim = New();
        trim.Trimmed(sentAt: 1_000, againMs: -1);
        trim.RoundSending(trim: true, acknowledging: false);

        trim.RoundFailed(trim: true);

        Assert.True(trim.IsDue(now: 1_100, acknowledging: false, taking: true));
    }

    [Fact]
    public void RoundFailed_ARoundThatWasNotToTrim_LeavesTheEndingAsItWas()
    {
        var trim = New();
        trim.Trimmed(sentAt: 1_000, againMs: -1);
        trim.RoundSending(trim: true, acknowledging: false);

        trim.RoundFailed(trim: false);

        Assert.False(trim.IsDue(now: 1_100, acknowledging: false, taking: true));
    }

    private static TrimSchedule New() => new(timestampFrequency: 1_000, Heartbeat);
}
