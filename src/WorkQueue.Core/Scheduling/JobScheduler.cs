using System.Diagnostics;

namespace WorkQueue.Scheduling;

/// <summary>
/// The engine's one timer structure for scheduled jobs: a heap of due times shared by every queue of a provider, behind
/// a single timer on the engine's <see cref="TimeProvider"/> that is armed for the earliest entry. A million scheduled
/// jobs are a million heap entries, not a million timers, and an idle engine with scheduled jobs wakes only when one
/// comes due.
/// </summary>
/// <remarks>
/// The heap only says when to look; which queue owns a job is decided by <see cref="ScheduledJobSet"/> (whoever takes
/// the entry out of its set first, the due time or a cancel or a stop, owns it). A cancelled entry stays in the heap until
/// its time or a compaction, so cancelling is O(1).
/// </remarks>
internal sealed class JobScheduler : IDisposable
{
    // Re-checked at least this often, so a wall-clock step (the due times are UTC) delays a job by at most this much, and
    // no timer is armed beyond what every TimeProvider accepts.
    internal static readonly TimeSpan MaxTimerDelay = TimeSpan.FromMinutes(1);

    // Due entries handed over per timer callback; the rest go on the next callback, armed at once, so a burst of due
    // jobs never holds the lock (and the engine's timer thread) for long.
    private const int BatchSize = 4096;

    private readonly Lock _lock = new();
    private readonly PriorityQueue<ScheduledEntry, (long DueTicks, long Sequence)> _heap = new();
    private readonly TimeProvider _time;
    private readonly ITimer _timer;
    private long _sequence;
    private long _armedForTicks = long.MaxValue;
    private int _stale;
    private bool _disposed;

    public JobScheduler(TimeProvider time)
    {
        _time = time;
        _timer = time.CreateTimer(static s => ((JobScheduler)s!).OnTimer(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    /// <summary>Gets the number of heap entries, stale ones included (for tests).</summary>
    internal int HeapCount
    {
        get
        {
            lock (_lock)
            {
                return _heap.Count;
            }
        }
    }

    /// <summary>Adds an entry its set already holds; the timer is brought forward if it is the earliest.</summary>
    public void Add(ScheduledEntry entry)
    {
        lock (_lock)
        {
            if (_disposed)
            {
                return;
            }

            long ticks = entry.DueAt.UtcTicks;
            _heap.Enqueue(entry, (ticks, ++_sequence));
            if (ticks < _armedForTicks)
            {
                ArmLocked(ticks);
            }
        }
    }

    /// <summary>Notes that an entry left its set early (cancelled or stopped): its heap entry is now stale.</summary>
    public void OnRemovedEarly()
    {
        lock (_lock)
        {
            // Stale entries are dropped in bulk once they outnumber the live ones, so a cancel-heavy workload does not
            // grow the heap without bound.
            if (++_stale > 1024 && _stale > _heap.Count / 2)
            {
                Compact();
            }
        }
    }

    public void Dispose()
    {
        lock (_lock)
        {
            _disposed = true;
            _heap.Clear();
        }

        _timer.Dispose();
    }

    private void OnTimer()
    {
        List<ScheduledEntry>? due = null;
        lock (_lock)
        {
            if (_disposed)
            {
                return;
            }

            _armedForTicks = long.MaxValue;
            long now = _time.GetUtcNow().UtcTicks;
            while (_heap.TryPeek(out var entry, out var priority) && priority.DueTicks <= now)
            {
                if (due is { Count: BatchSize })
                {
                    break;
                }

                _heap.Dequeue();
                if (entry.IsRemoved)
                {
                    _stale = Math.Max(0, _stale - 1);
                    continue;
                }

                (due ??= []).Add(entry);
            }

            if (_heap.TryPeek(out _, out var next))
            {
                ArmLocked(next.DueTicks);
            }
        }

        if (due is null)
        {
            return;
        }

        // Outside the lock: handing a job to its queue wakes a worker.
        foreach (var entry in due)
        {
            entry.Owner.OnDue(entry);
        }
    }

    private void ArmLocked(long dueTicks)
    {
        _armedForTicks = dueTicks;
        long delayTicks = dueTicks - _time.GetUtcNow().UtcTicks;
        var delay = delayTicks <= 0 ? TimeSpan.Zero : TimeSpan.FromTicks(Math.Min(delayTicks, MaxTimerDelay.Ticks));
        _timer.Change(delay, Timeout.InfiniteTimeSpan);
    }

    private void Compact()
    {
        var live = new List<(ScheduledEntry, (long, long))>(_heap.Count);
        foreach (var item in _heap.UnorderedItems)
        {
            if (!item.Element.IsRemoved)
            {
                live.Add(item);
            }
        }

        Debug.Assert(live.Count <= _heap.Count, "Compaction only removes entries.");
        _heap.Clear();
        _heap.EnqueueRange(live);
        _stale = 0;
    }
}
