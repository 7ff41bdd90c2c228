using System.Diagnostics;

namespace WorkQueue.Tracking;

/// <summary>
/// Ended jobs in the order they ended (a growable ring): appended at the end, forgotten from the start, read backwards
/// from any ending sequence number by binary search. Not thread-safe: <see cref="JobTracker"/> guards every use.
/// </summary>
internal sealed class EndedLog
{
    private TrackedJob[] _items = new TrackedJob[16];
    private int _head;

    public int Count { get; private set; }

    /// <summary>Gets the job at <paramref name="index"/>, 0 being the earliest ending kept.</summary>
    public TrackedJob this[int index]
    {
        get
        {
            Debug.Assert((uint)index < (uint)Count, "The index is within the log.");
            return _items[(_head + index) & (_items.Length - 1)];
        }
    }

    public void Append(TrackedJob job)
    {
        Debug.Assert(Count == 0 || this[Count - 1].EndSequence < job.EndSequence, "Jobs are appended in the order they ended.");
        if (Count == _items.Length)
        {
            var grown = new TrackedJob[_items.Length * 2];
            for (int i = 0; i < Count; i++)
            {
                grown[i] = this[i];
            }

            _items = grown;
            _head = 0;
        }

        _items[(_head + Count) & (_items.Length - 1)] = job;
        Count++;
    }

    public TrackedJob RemoveFirst()
    {
        Debug.Assert(Count > 0, "The log is not empty.");
        var job = _items[_head];
        _items[_head] = null!;
        _head = (_head + 1) & (_items.Length - 1);
        Count--;
        return job;
    }

    /// <summary>Gets the number of jobs whose ending sequence number is below <paramref name="before"/>.</summary>
    public int CountBefore(long before)
    {
        int low = 0;
        int high = Count;
        while (low < high)
        {
            int mid = (int)((uint)(low + high) >> 1);
            if (this[mid].EndSequence < before)
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
