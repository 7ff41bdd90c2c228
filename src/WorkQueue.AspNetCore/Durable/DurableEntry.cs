namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// One job fetched from a durable queue's stream: the target of its work item, so its outcome can be settled in Redis.
/// Its state goes Held -> Started, or Held -> TakenBack (Redis lost it; stored again) or Held -> Canceled (a cancel by
/// id came before it started), by compare-and-swap, so of a start and a take-back or a cancel exactly one wins.
/// </summary>
internal sealed class DurableEntry : WorkQueue.Durability.IRemoteCancellable, WorkQueue.Durability.IStoredJob
{
    public DurableEntry(string streamId, string jobId, string payload, int attempt, long enqueuedAtMs, long deliveries, string? idempotencyKey = null, string? jobType = null)
    {
        IdempotencyKey = idempotencyKey;
        StreamId = streamId;
        JobId = jobId;
        Payload = payload;
        JobType = jobType ?? JobTypeEnvelope.Read(payload, out _traceParent, out _);
        Attempt = attempt;
        EnqueuedAtMs = enqueuedAtMs;
        Deliveries = deliveries;
    }

    private const int Held = 0;
    private const int Started = 1;
    private const int TakenBack = 2;
    private const int Canceled = 3;

    private int _state;
    private int _cancelRequested;
    private CancellationTokenSource? _running;

    /// <summary>Gets a value indicating whether the store took the entry back before it started (it must not run here).</summary>
    public bool IsTakenBack => Volatile.Read(ref _state) == TakenBack;

    /// <summary>
    /// Gets or sets a value indicating whether this consumer found that Redis lost the entry (no more heartbeats; its
    /// outcome, or its hand-back when it had not started, stores it again without asking Redis whether it was lost).
    /// </summary>
    public bool Vanished { get; set; }

    /// <summary>
    /// Gets or sets the queue's epoch when the entry was fetched (see <see cref="RedisStreamKeys.Epoch"/>), empty when
    /// unknown: once it is not the current one, Redis lost the entry.
    /// </summary>
    public string Epoch { get; set; } = string.Empty;

    /// <summary>Marks the entry started at <paramref name="nowMs"/> (a queue thread); <see langword="false"/> when the store took it back, or a cancel came, first.</summary>
    public bool TryMarkStarted(long nowMs)
    {
        int previous = Interlocked.CompareExchange(ref _state, Started, Held);
        if (previous is Held or Started)
        {
            StartedAtMs = nowMs;
            return true;
        }

        return false;
    }

    /// <summary>Takes the entry back (the store's thread); <see langword="false"/> when it has started or was cancelled.</summary>
    public bool TryTakeBack()
    {
        int previous = Interlocked.CompareExchange(ref _state, TakenBack, Held);
        return previous is Held or TakenBack;
    }

    /// <summary>Gets a value indicating whether a cancel by id reached the entry before it started (it must not run; the store settles it).</summary>
    public bool CanceledBeforeStart => Volatile.Read(ref _state) == Canceled;

    /// <summary>Gets a value indicating whether a cancel by id reached this process while it held the entry.</summary>
    public bool CancelRequested => Volatile.Read(ref _cancelRequested) == 1;

    /// <summary>Gets when this process started the entry (Unix ms, this host's clock), or 0 before it started.</summary>
    public long StartedAtMs { get; private set; }

    /// <summary>
    /// A cancel by id reached this process: marks the entry, and either cancels the running attempt's token or, when it
    /// has not started, turns it Canceled. Returns <see langword="true"/> when it turned Canceled (the caller settles it).
    /// </summary>
    public bool RequestCancel()
    {
        Interlocked.Exchange(ref _cancelRequested, 1);
        if (Interlocked.CompareExchange(ref _state, Canceled, Held) == Held)
        {
            return true;
        }

        if (Volatile.Read(ref _running) is { } source)
        {
            // Callbacks registered on the token run on the thread pool, not on the store's thread.
            _ = source.CancelAsync();
        }

        return false;
    }

    /// <inheritdoc/>
    public void AttachCancellation(CancellationTokenSource source)
    {
        // Publish the source before reading the flag; a cancel sets the flag before reading the source (both full
        // fences), so at least one of the two cancels it.
        Interlocked.Exchange(ref _running, source);
        if (CancelRequested)
        {
            _ = source.CancelAsync();
        }
    }

    /// <summary>Gets the entry's id in the stream (it changes when a job is retried or handed back).</summary>
    public string StreamId { get; }

    /// <summary>Gets the job's id: the stream id it was first stored under, kept across retries and hand-backs.</summary>
    public string JobId { get; }

    /// <summary>Gets the payload as stored (JSON).</summary>
    public string Payload { get; }

    private readonly string? _traceParent;

    /// <inheritdoc/>
    public System.Diagnostics.ActivityContext TraceParent =>
        _traceParent is not null && System.Diagnostics.ActivityContext.TryParse(_traceParent, null, isRemote: true, out var context) ? context : default;

    /// <summary>Gets the job type's name the payload carries, or <see langword="null"/> when it is bare: the queue's default type (see <see cref="JobTypeEnvelope"/>).</summary>
    public string? JobType { get; }

    /// <summary>Gets the attempt this entry is (1 for the first run).</summary>
    public int Attempt { get; }

    /// <summary>Gets when the job was first enqueued, in Unix milliseconds of Redis's clock.</summary>
    public long EnqueuedAtMs { get; }

    /// <summary>Gets the job's idempotency key (stream field <c>k</c>), or <see langword="null"/> when it has none.</summary>
    public string? IdempotencyKey { get; }

    /// <summary>Gets how many times this entry has been delivered (1, plus one per reclaim after a consumer died).</summary>
    public long Deliveries { get; }

    /// <summary>Reads an entry from the fields a script returned (see <see cref="DurableScripts"/>).</summary>
    public static DurableEntry Parse(string streamId, StackExchange.Redis.RedisResult fields, long deliveries)
    {
        var read = new FieldReader();
        var raw = (StackExchange.Redis.RedisResult[])fields!;
        for (int i = 0; i + 1 < raw.Length; i += 2)
        {
            read.Add((StackExchange.Redis.RedisValue)raw[i], (StackExchange.Redis.RedisValue)raw[i + 1]);
        }

        return read.ToEntry(streamId, deliveries);
    }

    /// <summary>Reads an entry as a typed <c>XREADGROUP</c> returned it.</summary>
    public static DurableEntry Parse(StackExchange.Redis.StreamEntry entry, long deliveries)
    {
        var read = new FieldReader();
        foreach (var field in entry.Values)
        {
            read.Add(field.Name, field.Value);
        }

        return read.ToEntry((string)entry.Id!, deliveries);
    }

    /// <summary>The stream fields of an entry, read one at a time.</summary>
    private struct FieldReader
    {
        private string? _payload;
        private string? _job;
        private string? _key;
        private string? _type;
        private int _attempt;
        private long _enqueuedAt;

        /// <summary>
        /// Every field this version writes has a one-letter name (any other is passed over). Names and numbers are read
        /// from the reply's bytes (digits only, as written); only the strings the entry keeps (payload, job id, key) are made.
        /// </summary>
        public void Add(StackExchange.Redis.RedisValue name, StackExchange.Redis.RedisValue value)
        {
            var letter = ((ReadOnlyMemory<byte>)name).Span;
            if (letter.Length != 1)
            {
                return;
            }

            switch ((char)letter[0])
            {
                case 'p':
                    _payload = value;
                    break;
                case 'j':
                    _job = value;
                    break;
                case 'k':
                    _key = value;
                    break;
                case 'y':
                    // Not a stream field: findJobs.lua's stand-in for a payload it leaves out, the job type's name.
                    _type = value;
                    break;
                case 'a':
                    _ = int.TryParse(((ReadOnlyMemory<byte>)value).Span, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out _attempt);
                    break;
                case 't':
                    _ = long.TryParse(((ReadOnlyMemory<byte>)value).Span, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out _enqueuedAt);
                    break;
            }
        }

        public readonly DurableEntry ToEntry(string streamId, long deliveries) =>
            new(streamId, _job ?? streamId, _payload ?? string.Empty, Math.Max(1, _attempt), _enqueuedAt, deliveries, string.IsNullOrEmpty(_key) ? null : _key, string.IsNullOrEmpty(_type) ? null : _type);
    }
}
