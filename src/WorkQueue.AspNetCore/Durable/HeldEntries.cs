using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The entries this consumer holds (fetched, reclaimed or taken back, and not yet settled), by stream id, and those of
/// them the heartbeat found no longer this consumer's in Redis (lost: reclaimed by another consumer, or settled
/// elsewhere). Held entries are what heartbeats keep claimed (<see cref="Snapshot"/>); a lost one is not started here
/// (<see cref="TakeIfLost"/>).
/// </summary>
/// <remarks>
/// Touched from several threads: the store's (holds, marks lost, forgets once settled), the queue's worker threads
/// (<see cref="TakeIfLost"/> as a job starts), a request thread (<see cref="TryGet"/>, a job's status) and the
/// subscription's (a cancel by id), so both sets are concurrent dictionaries and no operation spans both under a lock:
/// an entry forgotten while another thread marks it lost leaves at most a stale lost mark, which nothing reads once the
/// entry is not held.
/// </remarks>
internal sealed class HeldEntries
{
    private readonly ConcurrentDictionary<string, DurableEntry> _held = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, byte> _lost = new(StringComparer.Ordinal);

    /// <summary>Gets the number of entries held.</summary>
    public int Count => _held.Count;

    /// <summary>Gets a value indicating whether nothing is held.</summary>
    public bool IsEmpty => _held.IsEmpty;

    /// <summary>Holds a fetched entry (so heartbeats cover it), replacing one held under the same stream id.</summary>
    public void Hold(DurableEntry entry) => _held[entry.StreamId] = entry;

    /// <summary>Finds the entry held under <paramref name="streamId"/>.</summary>
    public bool TryGet(string streamId, [NotNullWhen(true)] out DurableEntry? entry) => _held.TryGetValue(streamId, out entry);

    /// <summary>Tells whether an entry is held under <paramref name="streamId"/>.</summary>
    public bool Contains(string streamId) => _held.ContainsKey(streamId);

    /// <summary>Forgets a settled entry: no more heartbeats for it, and its lost mark (if any) goes with it.</summary>
    public void Forget(DurableEntry entry)
    {
        _held.TryRemove(entry.StreamId, out _);
        _lost.TryRemove(entry.StreamId, out _);
    }

    /// <summary>
    /// Marks a held entry lost (the heartbeat found it no longer this consumer's in Redis); returns whether it was held
    /// (one settled meanwhile is not marked).
    /// </summary>
    public bool MarkLost(string streamId)
    {
        if (!_held.ContainsKey(streamId))
        {
            return false;
        }

        _lost[streamId] = 0;
        return true;
    }

    /// <summary>
    /// As a job is about to start: when its entry was marked lost, forgets it and returns <see langword="true"/> (it must
    /// not run here: another consumer has it, or it was settled elsewhere).
    /// </summary>
    public bool TakeIfLost(string streamId)
    {
        if (!_lost.TryRemove(streamId, out _))
        {
            return false;
        }

        _held.TryRemove(streamId, out _);
        return true;
    }

    /// <summary>Gets a snapshot of the entries held, for the heartbeat's keep-alive (entries held or forgotten after it are not in it).</summary>
    public ICollection<DurableEntry> Snapshot() => _held.Values;
}
