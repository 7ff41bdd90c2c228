using System.Collections.Concurrent;

namespace WorkQueue.Accounting;

/// <summary>
/// One queue's idempotency keys: which job holds each, from its enqueue until it ends (and, after a success, for the
/// queue's retention). Reserving a key and binding it to the new job's id are two steps, so an enqueue that finds a key
/// being reserved by another waits for that job's id (a few instructions), and an enqueue that is then refused gives its
/// key back.
/// </summary>
internal sealed class IdempotencyKeys
{
    private const long Reserving = -1;

    private readonly ConcurrentDictionary<string, Holder> _held = new(StringComparer.Ordinal);
    private readonly TimeProvider _time;
    private readonly long _retentionTicks;
    private long _retained;

    public IdempotencyKeys(TimeProvider time, TimeSpan retention)
    {
        _time = time;
        _retentionTicks = (long)(retention.TotalSeconds * time.TimestampFrequency);
    }

    /// <summary>Gets the number of keys held (for tests and snapshots).</summary>
    public int Count => _held.Count;

    /// <summary>Reserves <paramref name="key"/> for a new job, or returns the id of the job that holds it.</summary>
    public bool TryReserve(string key, out long holder)
    {
        var spin = default(SpinWait);
        while (true)
        {
            if (_held.TryAdd(key, new Holder(Reserving, 0)))
            {
                holder = 0;
                return true;
            }

            if (!_held.TryGetValue(key, out var current))
            {
                continue;
            }

            if (current.RetainedUntil != 0 && _time.GetTimestamp() >= current.RetainedUntil)
            {
                // A succeeded job's retention has passed: the key is free again.
                if (_held.TryUpdate(key, new Holder(Reserving, 0), current))
                {
                    holder = 0;
                    return true;
                }

                continue;
            }

            if (current.JobId != Reserving)
            {
                holder = current.JobId;
                return false;
            }

            // Another enqueue is between its reservation and its id: a short wait.
            spin.SpinOnce();
        }
    }

    /// <summary>Binds a reserved key to the new job's id.</summary>
    public void Bind(string key, long jobId) => _held[key] = new Holder(jobId, 0);

    /// <summary>The job ended (or its enqueue was refused): its key is free, or kept for the retention after a success.</summary>
    public void Release(string key, long jobId, bool succeeded)
    {
        if (!_held.TryGetValue(key, out var current) || current.JobId != jobId)
        {
            return;
        }

        if (succeeded && _retentionTicks > 0)
        {
            _held.TryUpdate(key, new Holder(jobId, _time.GetTimestamp() + _retentionTicks), current);
            if (Interlocked.Increment(ref _retained) % 4096 == 0)
            {
                Sweep();
            }
        }
        else
        {
            _held.TryRemove(new KeyValuePair<string, Holder>(key, current));
        }
    }

    /// <summary>Drops keys whose retention has passed (called now and then, so retained keys do not pile up).</summary>
    public void Sweep()
    {
        if (_retentionTicks == 0)
        {
            return;
        }

        long now = _time.GetTimestamp();
        foreach (var (key, holder) in _held)
        {
            if (holder.RetainedUntil != 0 && now >= holder.RetainedUntil)
            {
                _held.TryRemove(new KeyValuePair<string, Holder>(key, holder));
            }
        }
    }

    /// <param name="JobId">The job holding the key, or <see cref="Reserving"/> while its enqueue takes an id.</param>
    /// <param name="RetainedUntil">0 while the job lives; after a success, the timestamp until which the key stays held.</param>
    private readonly record struct Holder(long JobId, long RetainedUntil);
}
