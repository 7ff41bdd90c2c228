using System.Diagnostics;
using WorkQueue.Internal;

namespace WorkQueue.Scheduling;

/// <summary>
/// One queue's scheduled jobs, from acceptance until they come due, are cancelled, or the queue stops. Each entry leaves
/// the set exactly once, through <see cref="OnDue"/>, <see cref="TryCancel"/> or <see cref="Close"/>: whichever removes
/// it owns it, so a job that comes due as it is cancelled either runs or is cancelled, never both.
/// </summary>
internal sealed class ScheduledJobSet
{
    private static readonly IComparer<(long DueTicks, long Id)> LatestFirst =
        Comparer<(long DueTicks, long Id)>.Create(static (a, b) => b.CompareTo(a));

    private readonly Lock _lock = new();
    private readonly Dictionary<long, ScheduledEntry> _entries = [];
    private readonly JobScheduler _scheduler;
    private readonly TimeProvider _time;
    private readonly Action<WorkItem> _handDue;
    private volatile int _count;
    private bool _closed;

    /// <param name="scheduler">The engine's timer structure.</param>
    /// <param name="maxCount">The most jobs the set holds (<see cref="WorkQueueOptions.MaxScheduledJobs"/>).</param>
    /// <param name="time">The engine's clock.</param>
    /// <param name="handDue">Where a job goes when it comes due: the queue's threads, ahead of the channel.</param>
    public ScheduledJobSet(JobScheduler scheduler, int maxCount, TimeProvider time, Action<WorkItem> handDue)
    {
        _scheduler = scheduler;
        MaxCount = maxCount;
        _time = time;
        _handDue = handDue;
    }

    public int MaxCount { get; }

    /// <summary>Gets the number of jobs waiting for their time.</summary>
    public int Count => _count;

    public ScheduleResult TryAdd(in WorkItem item, DateTimeOffset dueAt)
    {
        var now = _time.GetUtcNow();
        var entry = new ScheduledEntry(this, item, dueAt, now);
        lock (_lock)
        {
            // A stopping queue takes no job that would wait (it would only be reported), but one already due is work
            // like any enqueue that the admission let through (from a running job, during the drain).
            if (_closed && dueAt > now)
            {
                return ScheduleResult.Closed;
            }

            if (dueAt > now && _count >= MaxCount)
            {
                return ScheduleResult.Full;
            }

            if (dueAt > now)
            {
                _entries.Add(item.Id, entry);
                _count++;
            }
        }

        if (dueAt <= now)
        {
            // A time already past runs now: straight to the threads, with no trip through the timer.
            _handDue(item);
            return ScheduleResult.Due;
        }

        _scheduler.Add(entry);
        return ScheduleResult.Scheduled;
    }

    /// <summary>Called by the scheduler when an entry's time has come: the job goes to the threads unless it left already.</summary>
    public void OnDue(ScheduledEntry entry)
    {
        lock (_lock)
        {
            if (!_entries.Remove(entry.Item.Id))
            {
                return;
            }

            _count--;
        }

        // Its queue wait counts from now, when it became ready, not from when it was scheduled.
        _handDue(entry.Item.WithEnqueuedTimestamp(_time.GetTimestamp()));
    }

    /// <summary>Removes a job that has not come due.</summary>
    /// <returns>The job, or <see langword="null"/> if the set does not hold it (unknown, due already, or stopped).</returns>
    public ScheduledEntry? TryCancel(long id)
    {
        ScheduledEntry? entry;
        lock (_lock)
        {
            if (!_entries.Remove(id, out entry))
            {
                return null;
            }

            _count--;
        }

        entry.MarkRemoved();
        _scheduler.OnRemovedEarly();
        return entry;
    }

    /// <summary>Refuses new jobs from now on and takes every job that has not come due, for the shutdown report.</summary>
    public List<ScheduledEntry> Close()
    {
        List<ScheduledEntry> taken;
        lock (_lock)
        {
            _closed = true;
            taken = [.. _entries.Values];
            _entries.Clear();
            _count = 0;
        }

        foreach (var entry in taken)
        {
            entry.MarkRemoved();
            _scheduler.OnRemovedEarly();
        }

        return taken;
    }

    /// <summary>Gets up to <paramref name="max"/> waiting jobs, the soonest first (by due time, then id).</summary>
    public ScheduledEntry[] List(int max)
    {
        Debug.Assert(max >= 0, "The count is checked at the public entry point.");
        if (max == 0)
        {
            return [];
        }

        // The soonest max are kept in a heap of that size, latest on top, while the entries are read once: a dashboard
        // asking for the next job of 100,000 copies and sorts none of them (O(N log max) comparisons under the lock,
        // memory for max entries). The set is read rather than the scheduler's heap, which every queue of the provider
        // shares and which keeps cancelled entries. Keyed by the dictionary's id, so no WorkItem struct is copied out.
        PriorityQueue<ScheduledEntry, (long DueTicks, long Id)> soonest;
        lock (_lock)
        {
            soonest = new(Math.Min(max, _entries.Count), LatestFirst);
            foreach (var (id, entry) in _entries)
            {
                var key = (entry.DueAt.UtcTicks, id);
                if (soonest.Count < max)
                {
                    soonest.Enqueue(entry, key);
                }
                else if (soonest.TryPeek(out _, out var latest) && key.CompareTo(latest) < 0)
                {
                    soonest.DequeueEnqueue(entry, key);
                }
            }
        }

        var list = new ScheduledEntry[soonest.Count];
        for (int i = list.Length - 1; i >= 0; i--)
        {
            list[i] = soonest.Dequeue();
        }

        return list;
    }

    /// <summary>Finds a waiting job by id.</summary>
    public ScheduledEntry? Find(long id)
    {
        lock (_lock)
        {
            return _entries.GetValueOrDefault(id);
        }
    }
}
