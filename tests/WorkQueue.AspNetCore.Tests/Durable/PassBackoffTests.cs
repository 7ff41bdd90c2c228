using WorkQueue.AspNetCore.Durable;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// The store loop's wait after a failed pass: the full backoff, unless every error of the pass is one a slot on the move
/// gives on Redis Cluster; then a short wait that doubles while such passes fail in a row, capped at 200 ms (or the full
/// backoff when that is shorter).
/// (The messages a real migrating slot gives are checked in <see cref="DurableClusterSettleTests"/>.)
/// </summary>
public sealed class PassBackoffTests
{
    private static readonly TimeSpan Full = TimeSpan.FromSeconds(1);

    [Theory]
    [InlineData("TRYAGAIN Multiple keys request during rehashing of slot")]
    [InlineData("ASK 3999 127.0.0.1:6381")]
    [InlineData("MOVED 3999 127.0.0.1:6381")]
    [InlineData("ERR Script attempted to access a non local key in a cluster node script: 0123abcd, on @user_script:293.")]
    [InlineData("ERR Script attempted to access a non local key in a cluster node")]
    public void IsSlotMoving_ErrorsOfASlotOnTheMove_True(string message) => Assert.True(PassBackoff.IsSlotMoving(message));

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    [InlineData("READONLY You can't write against a read only replica.")]
    [InlineData("OOM command not allowed when used memory > 'maxmemory'.")]
    [InlineData("NOGROUP No such key 'q:{a}:stream' or consumer group 'workers'")]
    [InlineData("CLUSTERDOWN The cluster is down")]
    [InlineData("NOPERM this user has no permissions to run the 'xadd' command")]
    [InlineData("ERR unknown command 'TASK 1'")]
    public void IsSlotMoving_OtherErrors_False(string? message) => Assert.False(PassBackoff.IsSlotMoving(message));

    [Fact]
    public void AfterFailedPass_SlotMovesInARow_StartsShortAndDoublesUpToTheSlotMoveCap()
    {
        var backoff = new PassBackoff();
        var waits = new List<TimeSpan>();
        for (int i = 0; i < 7; i++)
        {
            backoff.PassStarted();
            backoff.Failed("TRYAGAIN Multiple keys request during rehashing of slot");
            backoff.Failed("ERR Script attempted to access a non local key in a cluster node");
            waits.Add(backoff.AfterFailedPass(Full));
        }

        Assert.Equal([50, 100, 200, 200, 200, 200, 200], waits.Select(w => w.TotalMilliseconds));
    }

    [Fact]
    public void AfterFailedPass_AnyOtherErrorInThePass_FullBackoff_AndTheNextSlotMoveStartsShortAgain()
    {
        var backoff = new PassBackoff();
        backoff.PassStarted();
        backoff.Failed("ASK 3999 127.0.0.1:6381");
        Assert.Equal(PassBackoff.SlotMoveFirst, backoff.AfterFailedPass(Full));

        backoff.PassStarted();
        backoff.Failed("MOVED 3999 127.0.0.1:6381");
        backoff.Failed("READONLY You can't write against a read only replica.");
        Assert.Equal(Full, backoff.AfterFailedPass(Full));

        backoff.PassStarted();
        backoff.Failed(null);
        Assert.Equal(Full, backoff.AfterFailedPass(Full));

        backoff.PassStarted();
        backoff.Failed("MOVED 3999 127.0.0.1:6381");
        Assert.Equal(PassBackoff.SlotMoveFirst, backoff.AfterFailedPass(Full));
    }

    [Fact]
    public void AfterFailedPass_APassSucceededBetween_StartsShortAgain()
    {
        var backoff = new PassBackoff();
        backoff.PassStarted();
        backoff.Failed("TRYAGAIN Multiple keys request during rehashing of slot");
        backoff.AfterFailedPass(Full);
        backoff.PassStarted();
        backoff.Failed("TRYAGAIN Multiple keys request during rehashing of slot");
        Assert.Equal(TimeSpan.FromMilliseconds(100), backoff.AfterFailedPass(Full));

        backoff.PassStarted();
        backoff.Succeeded();
        backoff.PassStarted();
        backoff.Failed("TRYAGAIN Multiple keys request during rehashing of slot");
        Assert.Equal(PassBackoff.SlotMoveFirst, backoff.AfterFailedPass(Full));
    }

    [Fact]
    public void AfterFailedPass_FullBackoffShorterThanTheFirstWait_WaitsTheFullBackoff()
    {
        var backoff = new PassBackoff();
        backoff.PassStarted();
        backoff.Failed("TRYAGAIN Multiple keys request during rehashing of slot");
        Assert.Equal(TimeSpan.FromMilliseconds(20), backoff.AfterFailedPass(TimeSpan.FromMilliseconds(20)));
    }

    [Fact]
    public void PassFailed_ClearedWhenAPassStarts_SetByAnyError()
    {
        var backoff = new PassBackoff();
        backoff.PassStarted();
        Assert.False(backoff.PassFailed);

        backoff.Failed("TRYAGAIN Multiple keys request during rehashing of slot");
        Assert.True(backoff.PassFailed);
        backoff.PassStarted();
        Assert.False(backoff.PassFailed);
        backoff.Failed(null);
        Assert.True(backoff.PassFailed);
    }
}
