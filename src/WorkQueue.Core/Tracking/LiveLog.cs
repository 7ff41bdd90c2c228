using System.Diagnostics;

namespace WorkQueue.Tracking;

/// <summary>
/// Tracked jobs in the order they were accepted, for the job search to read the jobs in flight newest first in bounded
/// steps. A job that ends stays until the next compaction (the reader skips it); <see cref="JobTracker"/> compacts
/// when ended entries make up half the log. Not thread-safe: the tracker guards every use.
/// </summary>
internal sealed class LiveLog
{
    private TrackedJob[] _items = new TrackedJob[16];

    public int Count { get; private set; }

    public TrackedJob this[int index]
    {
        get
        {
            Debug.Assert((uint)index < (uint)Count, "The index is within the log.");
            return _items[index];
        }
    }

    public void Append(TrackedJob job)
    {
        Debug.Assert(Count == 0 || _items[Count - 1].TrackSequence < job.TrackSequence, "Jobs are appended in the order they were accepted.");
        if (Count == _items.Length)
        {
            Array.Resize(ref _items, _items.Length * 2);
        }

        _items[Count++] = job;
    }

    /// <summary>Drops the entries of jobs that ended (or were never accepted), keeping the order; returns how many.</summary>
    public int Compact()
    {
        int kept = 0;
        for (int i = 0; i < Count; i++)
        {
            var job = _items[i];
            if (!job.IsGone)
            {
                _items[kept++] = job;
            }
        }

        int removed = Count - kept;
        Array.Clear(_items, kept, removed);
        Count = kept;

        // Shrink after a burst, so a log that once held a million jobs does not keep their slots.
        if (_items.Length > 64 && Count < _items.Length / 4)
        {
            Array.Resize(ref _items, Math.Max(16, Count * 2));
        }

        return removed;
    }

    /// <summary>Gets the number of entries whose acceptance sequence number is below <paramref name="before"/>.</summary>
    public int CountBefore(long before)
    {
        int low = 0;
        int high = Count;
        while (low < high)
        {
            int mid = (int)((uint)(low + high) >> 1);
            if (_items[mid].TrackSequence < before)
            {
                low = mid + 1;
            }
            else
            {
                high = mid;
            }
        }

        return low;
    }
}
