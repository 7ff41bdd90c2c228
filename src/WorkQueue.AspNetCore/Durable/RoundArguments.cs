using System.Diagnostics;
using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The round script's ARGV (<c>Durable/Scripts/round.lua</c>), built in one place: the settings, the width of an
/// enqueue, a header that gives each of the four sections (enqueues, key releases, plain acknowledgements, other
/// acknowledgements) its first index and element count, then the sections. The constructor sizes the array from the
/// counts and writes the header; each <c>Add</c> fills its section in turn, so no caller computes an offset.
/// </summary>
internal sealed class RoundArguments
{
    /// <summary>The fields of an enqueue in the full form: payload, spec, idempotency key.</summary>
    public const int EnqueueFields = 3;

    /// <summary>The fields of a key release: key, job id, stream id.</summary>
    public const int ReleaseFields = 3;

    /// <summary>The fields of a plain acknowledgement when records are kept: stream id, enqueued at, started at.</summary>
    public const int TimedPlainAckFields = 3;

    /// <summary>The fields of another acknowledgement: stream id, job id, attempt, enqueued at, started at, cancel asked, job type.</summary>
    public const int AckFields = 7;

    // The settings' positions (0-based; Lua's ARGV index is one more). The script's header names them in this order.
    private const int GroupAt = 0;
    private const int ConsumerAt = 1;
    private const int CapacityAt = 2;
    private const int NudgeChannelAt = 3;
    private const int FetchCountAt = 4;
    private const int PromoteLimitAt = 5;
    private const int KeyRetentionAt = 6;
    private const int FinishedRetentionAt = 7;
    private const int FinishedCapAt = 8;
    private const int TrimAt = 9;
    private const int NudgeTagAt = 10;
    private const int EnqueueWidthAt = 11;
    private const int SectionHeaderAt = 12;
    private const int SectionCount = 4;
    private const int HeaderLength = SectionHeaderAt + (2 * SectionCount);

    private readonly RedisValue[] _values;
    private readonly int _enqueueEnd;
    private readonly int _releaseEnd;
    private readonly int _plainAckEnd;
    private readonly int _plainAckWidth;
    private int _enqueueAt;
    private int _releaseAt;
    private int _plainAckAt;
    private int _ackAt;

    /// <summary>
    /// Sizes the arguments for the sections' element counts; <paramref name="plainEnqueues"/>: payloads alone (due now,
    /// no key); <paramref name="recordsKept"/>: the finished-job retention the round is given is not 0, so a plain
    /// acknowledgement carries its times for the job's record (without records it is its stream id alone).
    /// </summary>
    public RoundArguments(int enqueues, bool plainEnqueues, int releases, int plainAcks, int acks, bool recordsKept)
    {
        int width = plainEnqueues ? 1 : EnqueueFields;
        _plainAckWidth = recordsKept ? TimedPlainAckFields : 1;
        _enqueueAt = HeaderLength;
        _releaseAt = _enqueueEnd = _enqueueAt + (width * enqueues);
        _plainAckAt = _releaseEnd = _releaseAt + (ReleaseFields * releases);
        _ackAt = _plainAckEnd = _plainAckAt + (_plainAckWidth * plainAcks);
        _values = new RedisValue[_ackAt + (AckFields * acks)];
        _values[EnqueueWidthAt] = width;
        SetSection(0, _enqueueAt, enqueues);
        SetSection(1, _releaseAt, releases);
        SetSection(2, _plainAckAt, plainAcks);
        SetSection(3, _ackAt, acks);
        PlainEnqueues = plainEnqueues;
    }

    /// <summary>Gets whether the enqueues travel as payloads alone.</summary>
    public bool PlainEnqueues { get; }

    /// <summary>Gets the arguments, once every section is filled.</summary>
    public RedisValue[] Values
    {
        get
        {
            Debug.Assert(_enqueueAt == _enqueueEnd && _releaseAt == _releaseEnd && _plainAckAt == _plainAckEnd && _ackAt == _values.Length, "Every section is filled.");
            return _values;
        }
    }

    /// <summary>Sets how many entries the round's read may take (0: no fetch, no promotion).</summary>
    public int FetchCount
    {
        set => _values[FetchCountAt] = value;
    }

    /// <summary>Sets the nudge tag, <c>{consumer}|{round}</c> (empty without enqueues).</summary>
    public RedisValue NudgeTag
    {
        set => _values[NudgeTagAt] = value;
    }

    /// <summary>Sets the round's settings.</summary>
    public void SetSettings(string group, string consumer, int capacity, string nudgeChannel, int fetchCount, int promoteLimit, long keyRetentionMs, long finishedRetentionMs, int finishedCap, bool trim)
    {
        _values[GroupAt] = group;
        _values[ConsumerAt] = consumer;
        _values[CapacityAt] = capacity;
        _values[NudgeChannelAt] = nudgeChannel;
        _values[FetchCountAt] = fetchCount;
        _values[PromoteLimitAt] = promoteLimit;
        _values[KeyRetentionAt] = keyRetentionMs;
        Debug.Assert(finishedRetentionMs > 0 == (_plainAckWidth == TimedPlainAckFields), "Plain acknowledgements carry their times exactly when records are kept.");
        _values[FinishedRetentionAt] = finishedRetentionMs;
        _values[FinishedCapAt] = finishedCap;
        _values[TrimAt] = trim ? 1 : 0;
        _values[NudgeTagAt] = RedisValue.EmptyString;
    }

    /// <summary>Adds an enqueue: its payload and, in the full form, its spec and idempotency key (empty: none).</summary>
    public void AddEnqueue(string payload, string spec, string key)
    {
        Debug.Assert(!PlainEnqueues || (spec.Length == 0 && key.Length == 0), "A plain enqueue has no spec and no key.");
        _values[_enqueueAt++] = payload;
        if (!PlainEnqueues)
        {
            _values[_enqueueAt++] = spec;
            _values[_enqueueAt++] = key;
        }
    }

    /// <summary>Adds the release of a completed entry's idempotency key.</summary>
    public void AddRelease(string key, string jobId, string streamId)
    {
        _values[_releaseAt++] = key;
        _values[_releaseAt++] = jobId;
        _values[_releaseAt++] = streamId;
    }

    /// <summary>Adds a plain acknowledgement: its job id is its stream id, on attempt 1, with no cancel, of the queue's default type; its times only when records are kept.</summary>
    public void AddPlainAck(string streamId, long enqueuedAtMs, RedisValue startedAtMs)
    {
        _values[_plainAckAt++] = streamId;
        if (_plainAckWidth == TimedPlainAckFields)
        {
            _values[_plainAckAt++] = enqueuedAtMs;
            _values[_plainAckAt++] = startedAtMs;
        }
    }

    /// <summary>Adds another acknowledgement; <paramref name="jobType"/> is <see langword="null"/> for the queue's default type.</summary>
    public void AddAck(string streamId, string jobId, int attempt, long enqueuedAtMs, RedisValue startedAtMs, bool cancelRequested, string? jobType = null)
    {
        _values[_ackAt++] = streamId;
        _values[_ackAt++] = jobId == streamId ? RedisValue.EmptyString : jobId;
        _values[_ackAt++] = attempt;
        _values[_ackAt++] = enqueuedAtMs;
        _values[_ackAt++] = startedAtMs;
        _values[_ackAt++] = cancelRequested ? "1" : RedisValue.EmptyString;
        _values[_ackAt++] = jobType ?? RedisValue.EmptyString;
    }

    // Lua's ARGV is 1-based.
    private void SetSection(int section, int first, int count)
    {
        _values[SectionHeaderAt + (2 * section)] = first + 1;
        _values[SectionHeaderAt + (2 * section) + 1] = count;
    }
}
