namespace WorkQueue.AspNetCore.Durable;

/// <summary>One job fetched from a durable queue's stream: the target of its work item, so its outcome can be settled in Redis.</summary>
internal sealed class DurableEntry
{
    public DurableEntry(string streamId, string jobId, string payload, int attempt, long enqueuedAtMs, long deliveries, string? idempotencyKey = null)
    {
        IdempotencyKey = idempotencyKey;
        StreamId = streamId;
        JobId = jobId;
        Payload = payload;
        Attempt = attempt;
        EnqueuedAtMs = enqueuedAtMs;
        Deliveries = deliveries;
    }

    private const int Held = 0;
    private const int Started = 1;
    private const int TakenBack = 2;

    private int _state;

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

    /// <summary>Marks the entry started (a queue thread); <see langword="false"/> when the store took it back first.</summary>
    public bool TryMarkStarted() => Interlocked.CompareExchange(ref _state, Started, Held) != TakenBack;

    /// <summary>Takes the entry back (the store's thread); <see langword="false"/> when it has started.</summary>
    public bool TryTakeBack() => Interlocked.CompareExchange(ref _state, TakenBack, Held) != Started;

    /// <summary>Gets the entry's id in the stream (it changes when a job is retried or handed back).</summary>
    public string StreamId { get; }

    /// <summary>Gets the job's id: the stream id it was first stored under, kept across retries and hand-backs.</summary>
    public string JobId { get; }

    /// <summary>Gets the payload as stored (JSON).</summary>
    public string Payload { get; }

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
        string? payload = null;
        string? job = null;
        string? key = null;
        int attempt = 1;
        long enqueuedAt = 0;
        var raw = (StackExchange.Redis.RedisResult[])fields!;
        for (int i = 0; i + 1 < raw.Length; i += 2)
        {
            switch ((string?)raw[i])
            {
                case "p":
                    payload = (string?)raw[i + 1];
                    break;
                case "j":
                    job = (string?)raw[i + 1];
                    break;
                case "k":
                    key = (string?)raw[i + 1];
                    break;
                case "a":
                    _ = int.TryParse((string?)raw[i + 1], System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out attempt);
                    break;
                case "t":
                    _ = long.TryParse((string?)raw[i + 1], System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out enqueuedAt);
                    break;
            }
        }

        return new DurableEntry(streamId, job ?? streamId, payload ?? string.Empty, Math.Max(1, attempt), enqueuedAt, deliveries, string.IsNullOrEmpty(key) ? null : key);
    }
}
