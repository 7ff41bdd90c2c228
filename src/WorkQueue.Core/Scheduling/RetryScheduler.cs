using System.Collections.Concurrent;
using WorkQueue.Internal;

namespace WorkQueue.Scheduling;

/// <summary>
/// Holds failed jobs until their retry delay passes (timers on the engine's <see cref="TimeProvider"/>, not the thread
/// pool), then hands them back to the pool. Once the queue abandons, nothing is handed back: every pending retry is
/// reported instead, exactly once (whoever removes the entry first, the timer or the abandon, owns it).
/// </summary>
internal sealed class RetryScheduler
{
    private readonly ConcurrentDictionary<long, Pending> _pending = new();
    private readonly object _gate = new();
    private readonly TimeProvider _time;
    private readonly Action<WorkItem> _requeue;
    private readonly Action<WorkItem, AbandonReason> _abandon;
    private bool _abandoning;

    public RetryScheduler(TimeProvider time, Action<WorkItem> requeue, Action<WorkItem, AbandonReason> abandon)
    {
        _time = time;
        _requeue = requeue;
        _abandon = abandon;
    }

    public int Count => _pending.Count;

    public void Schedule(in WorkItem item, TimeSpan delay)
    {
        var pending = new Pending(this, item);
        lock (_gate)
        {
            if (!_abandoning)
            {
                _pending[item.Id] = pending;
                pending.Timer = _time.CreateTimer(static s => ((Pending)s!).Fire(), pending, delay, Timeout.InfiniteTimeSpan);
                return;
            }
        }

        // The queue abandoned between the caller's check and now: report the retry at once, so the shutdown report has it.
        _abandon(item, AbandonReason.RetryPending);
    }

    /// <summary>Reports every pending retry and hands none back from now on.</summary>
    public void AbandonAll()
    {
        List<WorkItem> abandoned = [];
        lock (_gate)
        {
            _abandoning = true;
            foreach (var id in _pending.Keys)
            {
                if (_pending.TryRemove(id, out var pending))
                {
                    pending.Timer?.Dispose();
                    abandoned.Add(pending.Item);
                }
            }
        }

        foreach (var item in abandoned)
        {
            _abandon(item, AbandonReason.RetryPending);
        }
    }

    /// <summary>Forgets a pending retry whose job was cancelled (and counted) meanwhile; its timer is stopped.</summary>
    public void TryRemove(long id)
    {
        lock (_gate)
        {
            if (_pending.TryRemove(id, out var pending))
            {
                pending.Timer?.Dispose();
            }
        }
    }

    private void OnDue(Pending pending)
    {
        bool requeue;
        lock (_gate)
        {
            if (!_pending.TryRemove(pending.Item.Id, out _))
            {
                return;
            }

            requeue = !_abandoning;
            pending.Timer?.Dispose();
        }

        if (requeue)
        {
            _requeue(pending.Item.ForNextAttempt(_time.GetTimestamp()));
        }
        else
        {
            _abandon(pending.Item, AbandonReason.RetryPending);
        }
    }

    private sealed class Pending(RetryScheduler owner, WorkItem item)
    {
        public WorkItem Item { get; } = item;

        public ITimer? Timer { get; set; }

        public void Fire() => owner.OnDue(this);
    }
}
