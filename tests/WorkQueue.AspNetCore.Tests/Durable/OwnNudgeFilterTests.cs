using WorkQueue.AspNetCore.Durable;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// The rule for a consumer's own nudge (<see cref="OwnNudgeFilter"/>): skipped only when the round that published it
/// read everything, whichever of the nudge and the round's reply is taken first, and never a nudge it cannot tie to a
/// known outcome.
/// </summary>
public sealed class OwnNudgeFilterTests
{
    [Theory]
    [InlineData(true, false)]
    [InlineData(false, true)]
    public void OnNudge_AfterItsRoundIsResolved_FetchesOnlyWhenTheRoundDidNotReadEverything(bool covered, bool expected)
    {
        var filter = new OwnNudgeFilter();
        long round = filter.NextRound();
        Assert.False(filter.Resolve(round, covered));

        Assert.Equal(expected, filter.OnNudge(round));
    }

    [Theory]
    [InlineData(true, false)]
    [InlineData(false, true)]
    public void OnNudge_BeforeItsRoundIsResolved_WaitsForTheOutcome(bool covered, bool expected)
    {
        var filter = new OwnNudgeFilter();
        long round = filter.NextRound();

        Assert.False(filter.OnNudge(round));
        Assert.Equal(expected, filter.Resolve(round, covered));
    }

    [Fact]
    public void OnNudge_OfAnEarlierRound_IsNotDecidedByALaterRoundsOutcome()
    {
        var filter = new OwnNudgeFilter();
        long needed = filter.NextRound();
        filter.Resolve(needed, covered: false);
        long coveredRound = filter.NextRound();
        filter.Resolve(coveredRound, covered: true);

        // Delivered late, after a later round that read everything: the earlier round's nudge still counts.
        Assert.True(filter.OnNudge(needed));
        Assert.False(filter.OnNudge(coveredRound));
    }

    [Fact]
    public void OnNudge_OlderThanTheWindowOrNeverSent_Counts()
    {
        var filter = new OwnNudgeFilter();
        long first = filter.NextRound();
        filter.Resolve(first, covered: true);
        for (int i = 0; i < OwnNudgeFilter.Window; i++)
        {
            filter.Resolve(filter.NextRound(), covered: true);
        }

        Assert.True(filter.OnNudge(first));
        Assert.True(filter.OnNudge(first + 1_000));
    }

    [Theory]
    [InlineData("3|host:12:ab|7", "host:12:ab", true, 7)]
    [InlineData("3|we|ird:1|7", "we|ird:1", true, 7)]
    [InlineData("3|other:1:cd|7", "host:12:ab", false, 0)]
    [InlineData("3", "host:12:ab", false, 0)]
    [InlineData("1", "host:12:ab", false, 0)]
    [InlineData("3|host:12:ab|", "host:12:ab", false, 0)]
    [InlineData("3|host:12:ab|0", "host:12:ab", false, 0)]
    public void IsOwnNudge_ReadsTheTagTheRoundPublishes(string message, string consumer, bool own, long round)
    {
        Assert.Equal(own, RedisStreamStore.IsOwnNudge(message, consumer, out long parsed));
        Assert.Equal(round, parsed);
    }
}
