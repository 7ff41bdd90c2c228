using Microsoft.Extensions.Time.Testing;
using WorkQueue.AspNetCore.Durable;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>The offset between Redis's clock and this process's: taken halfway through a call, the least uncertain sample wins until it ages.</summary>
public sealed class RedisClockOffsetTests
{
    private static readonly DateTimeOffset Start = new(2026, 11, 25, 12, 0, 0, TimeSpan.Zero);

    [Fact]
    public void Offset_BeforeAnySample_IsZero() =>
        Assert.Equal(TimeSpan.Zero, new RedisClockOffset(new FakeTimeProvider(Start)).Offset);

    [Fact]
    public void Sample_RedisTwoSecondsBehind_OffsetIsTakenHalfwayThroughTheCall()
    {
        var time = new FakeTimeProvider(Start);
        var clock = new RedisClockOffset(time);
        var sent = clock.Start();
        time.Advance(TimeSpan.FromMilliseconds(10));

        // Redis read its clock halfway (5 ms after sending), 2 s behind ours.
        clock.Sample(sent, (Start + TimeSpan.FromMilliseconds(5) - TimeSpan.FromSeconds(2)).ToUnixTimeMilliseconds());
        Assert.Equal(TimeSpan.FromSeconds(-2), clock.Offset);
    }

    [Fact]
    public void Sample_SlowerCall_DoesNotReplaceAFasterOne_UntilTheFasterOneAges()
    {
        var time = new FakeTimeProvider(Start);
        var clock = new RedisClockOffset(time);
        Measure(time, clock, roundTrip: TimeSpan.FromMilliseconds(4), offset: TimeSpan.FromSeconds(1));

        // A slow call (its reply waited 400 ms somewhere) is less certain: it does not move the offset.
        Measure(time, clock, roundTrip: TimeSpan.FromMilliseconds(400), offset: TimeSpan.FromSeconds(1.2));
        Assert.Equal(TimeSpan.FromSeconds(1), clock.Offset);

        // A faster one does; and once the best is older than MaxAge, any newer one does (a clock that was stepped).
        Measure(time, clock, roundTrip: TimeSpan.FromMilliseconds(2), offset: TimeSpan.FromSeconds(1.1));
        Assert.Equal(TimeSpan.FromSeconds(1.1), clock.Offset);
        time.Advance(RedisClockOffset.MaxAge);
        Measure(time, clock, roundTrip: TimeSpan.FromMilliseconds(50), offset: TimeSpan.FromSeconds(-3));
        Assert.Equal(TimeSpan.FromSeconds(-3), clock.Offset);
    }

    /// <summary>
    /// The local clock is stepped (NTP corrects an hour): the next sample, slower than the best one, shows an offset that
    /// the best one's uncertainty cannot explain, so it is taken at once. Before, the stale offset stood until the best
    /// sample aged (30 s), and a job whose timer fired meanwhile ran its occurrence early by up to the step.
    /// </summary>
    [Fact]
    public void Sample_InconsistentWithTheBest_ClockWasStepped_TakenAtOnce()
    {
        var time = new FakeTimeProvider(Start);
        var clock = new RedisClockOffset(time);
        Measure(time, clock, roundTrip: TimeSpan.FromMilliseconds(2), offset: TimeSpan.FromHours(1));

        Measure(time, clock, roundTrip: TimeSpan.FromMilliseconds(20), offset: TimeSpan.Zero);
        Assert.Equal(TimeSpan.Zero, clock.Offset);
    }

    private static void Measure(FakeTimeProvider time, RedisClockOffset clock, TimeSpan roundTrip, TimeSpan offset)
    {
        var sent = clock.Start();
        var redisNow = time.GetUtcNow() + (roundTrip / 2) + offset;
        time.Advance(roundTrip);
        clock.Sample(sent, redisNow.ToUnixTimeMilliseconds());
    }
}
