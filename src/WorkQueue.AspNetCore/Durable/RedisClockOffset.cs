using System.Diagnostics;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// How far Redis's clock is ahead of this process's (negative: behind), measured from the calls that return Redis's
/// <c>TIME</c> (each round, each recurring registration): Redis read its clock somewhere between sending and receiving,
/// so the offset is its time minus the local time halfway, off by at most half the round trip. The sample with the
/// smallest round trip wins (the least uncertain), among those of the last <see cref="MaxAge"/>, so a changed clock
/// (a step, a drift) is followed within that time.
/// </summary>
internal sealed class RedisClockOffset(TimeProvider time)
{
    /// <summary>How long the best sample stands before any newer one replaces it.</summary>
    public static readonly TimeSpan MaxAge = TimeSpan.FromSeconds(30);

    private readonly Lock _lock = new();
    private long _offsetTicks;
    private TimeSpan _bestRoundTrip = TimeSpan.MaxValue;
    private long _bestAt;

    /// <summary>Gets the offset of the best sample (zero before any).</summary>
    public TimeSpan Offset => TimeSpan.FromTicks(Volatile.Read(ref _offsetTicks));

    /// <summary>Starts a measured call: the local time and timestamp before it is sent.</summary>
    public (DateTimeOffset SentAt, long Timestamp) Start() => (time.GetUtcNow(), time.GetTimestamp());

    /// <summary>Takes the Redis time (Unix ms) that a call started at <paramref name="start"/> answered.</summary>
    public void Sample((DateTimeOffset SentAt, long Timestamp) start, long redisUnixMs)
    {
        long now = time.GetTimestamp();
        var roundTrip = time.GetElapsedTime(start.Timestamp, now);
        Debug.Assert(roundTrip >= TimeSpan.Zero, "A timestamp is monotonic.");
        var local = start.SentAt + (roundTrip / 2);
        var offset = DateTimeOffset.FromUnixTimeMilliseconds(redisUnixMs) - local;
        lock (_lock)
        {
            if (roundTrip <= _bestRoundTrip || time.GetElapsedTime(_bestAt, now) > MaxAge)
            {
                _bestRoundTrip = roundTrip;
                _bestAt = now;
                Volatile.Write(ref _offsetTicks, offset.Ticks);
            }
        }
    }
}
