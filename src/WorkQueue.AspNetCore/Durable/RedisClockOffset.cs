using System.Diagnostics;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// How far Redis's clock is ahead of this process's (negative: behind), measured from the calls that return Redis's
/// <c>TIME</c> (each round, each recurring registration): Redis read its clock somewhere between sending and receiving,
/// so the offset is its time minus the local time halfway, off by at most half the round trip. The sample with the
/// smallest round trip wins (the least uncertain), among those of the last <see cref="MaxAge"/>; a sample that the best
/// one's uncertainty cannot explain (a clock was stepped, or drifted) replaces it at once, so a stepped local clock does
/// not make durable recurring jobs fire early by the step until the best sample ages.
/// </summary>
internal sealed class RedisClockOffset(TimeProvider time)
{
    /// <summary>How long the best sample stands before any newer one replaces it.</summary>
    public static readonly TimeSpan MaxAge = TimeSpan.FromSeconds(30);

    private readonly Lock _lock = new();
    private long _offsetTicks;
    private TimeSpan _bestRoundTrip = TimeSpan.MaxValue;
    private long _bestAt;

    /// <summary>The slack of Redis's time in milliseconds, and of rounding, on top of the half round trips.</summary>
    private static readonly TimeSpan Resolution = TimeSpan.FromMilliseconds(2);

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
            if (roundTrip <= _bestRoundTrip || time.GetElapsedTime(_bestAt, now) > MaxAge || !Agrees(offset, roundTrip))
            {
                _bestRoundTrip = roundTrip;
                _bestAt = now;
                Volatile.Write(ref _offsetTicks, offset.Ticks);
            }
        }
    }

    /// <summary>
    /// Whether a sample's offset can be the best one's: each is known within half its round trip, so two that are further
    /// apart than that mean a clock moved (a step, or drift since) and the newer one is taken at once, not after MaxAge.
    /// </summary>
    private bool Agrees(TimeSpan offset, TimeSpan roundTrip) =>
        (offset - TimeSpan.FromTicks(_offsetTicks)).Duration() <= ((roundTrip + _bestRoundTrip) / 2) + Resolution;
}
