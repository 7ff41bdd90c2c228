namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// When the store's round trims the ended-job lists and their records (their retention and count cap; ended records
/// have no expiry of their own): at most every <see cref="Interval"/>, and only when something may need it. A round
/// that acknowledges trims, as does the next one after this instance ended jobs otherwise (<see cref="Ended"/>: dead
/// letters, cancels, poison, hand-backs of cancelled jobs), since the count cap may be passed. An idle consuming
/// instance's poll trims only once the oldest listed record passes the retention (the last trim's answer), so records go
/// within a poll interval of it, and at least every heartbeat (records another instance listed in an empty list, the
/// hash's sweep). An instance that fetches nothing (paused, not consuming, or with its prefetch full) sends a round
/// only to trim.
/// </summary>
/// <remarks>
/// Timestamps are the store's <see cref="TimeProvider"/>'s. The store's thread alone decides and records trims;
/// <see cref="Ended"/> may come from any thread (a cancel by id on a request thread), so the flag it sets is volatile
/// and written only as needed, never read and written back: a read-then-write would lose an ending set in between.
/// </remarks>
internal sealed class TrimSchedule
{
    /// <summary>
    /// How often the round trims at most: a few commands per list, plus one HDEL per 512 records dropped; records are
    /// never expired by Redis one by one.
    /// </summary>
    internal static readonly TimeSpan Interval = TimeSpan.FromMilliseconds(100);

    private readonly long _frequency;
    private readonly TimeSpan _idleMax;
    private long _next;

    /// <summary>
    /// When a round that acknowledges nothing next trims, if nothing ended here meanwhile: when the oldest listed record
    /// passes the retention (the last trim's answer), at the latest a heartbeat interval after the last trim.
    /// </summary>
    private long _nextIdle;

    /// <summary>Whether a job ended here since the last trim other than by this round's acknowledgements: the count cap may be passed.</summary>
    private volatile bool _ended;

    /// <summary>Creates the schedule of one store's trims.</summary>
    /// <param name="timestampFrequency">The frequency of the store's <see cref="TimeProvider"/>'s timestamps.</param>
    /// <param name="heartbeatInterval">The longest an idle consuming instance goes without a trim.</param>
    public TrimSchedule(long timestampFrequency, TimeSpan heartbeatInterval)
    {
        _frequency = timestampFrequency;
        _idleMax = heartbeatInterval;
    }

    /// <summary>A job ended here outside the round's acknowledgements: the next round due to trims.</summary>
    public void Ended() => _ended = true;

    /// <summary>Tells whether a round sent at <paramref name="now"/> trims.</summary>
    /// <param name="now">The round's timestamp.</param>
    /// <param name="acknowledging">Whether the round carries acknowledgements.</param>
    /// <param name="taking">Whether this instance takes jobs (one that does not sends a round only to trim).</param>
    public bool IsDue(long now, bool acknowledging, bool taking) =>
        now >= _next && (acknowledging || !taking || _ended || now >= _nextIdle);

    /// <summary>
    /// A round is being sent: one that trims clears the ending flag before it reads the lists (an ending after it is
    /// seen by the next round); one that acknowledges without trimming sets it (its acknowledgements are endings for the
    /// next trim).
    /// </summary>
    public void RoundSending(bool trim, bool acknowledging)
    {
        if (trim)
        {
            _ended = false;
        }
        else if (acknowledging)
        {
            _ended = true;
        }
    }

    /// <summary>A round failed: when it was to trim, the next round trims (its cleared flag is set again).</summary>
    public void RoundFailed(bool trim)
    {
        if (trim)
        {
            _ended = true;
        }
    }

    /// <summary>
    /// A round sent at <paramref name="sentAt"/> trimmed: the next trims no sooner than <see cref="Interval"/>, an idle
    /// one once the oldest listed record passes the retention (<paramref name="againMs"/>, the trim's answer; negative
    /// when none is listed), at the latest a heartbeat interval on.
    /// </summary>
    public void Trimmed(long sentAt, long againMs)
    {
        _next = sentAt + Ticks(Interval);
        _nextIdle = sentAt + Ticks(againMs >= 0 && againMs < _idleMax.TotalMilliseconds ? TimeSpan.FromMilliseconds(againMs) : _idleMax);
    }

    private long Ticks(TimeSpan span) => (long)(span.TotalSeconds * _frequency);
}
