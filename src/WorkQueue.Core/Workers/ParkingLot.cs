using System.Diagnostics;

namespace WorkQueue.Workers;

/// <summary>
/// The leader/follower protocol of one pool's idle threads. At most one thread (the leader) waits on the channel, so
/// an enqueue wakes one thread rather than every idle one (<c>WaitToReadAsync</c> wakes all its waiters); the others
/// park LIFO, so surplus threads stay parked and retire. All state changes happen under one lock, and
/// <see cref="ParkedCount"/> is published with full fences on both sides: a thread counts itself parked before it looks
/// for work one last time, a poster publishes its work before it reads the count, so one of the two sees the other.
/// </summary>
internal sealed class ParkingLot
{
    private readonly object _lock = new();
    private readonly List<WorkerThread> _followers = [];
    private readonly Func<bool> _hasWork;
    private readonly Func<bool> _mayLead;
    private WorkerThread? _leader;
    private int _parked;

    /// <param name="hasWork">Whether work that any thread may take (a continuation or a due retry) is waiting.</param>
    /// <param name="mayLead">
    /// Whether a thread may wait on the channel now (jobs may start). Read under the lock: whoever changes what it reads
    /// (resume, a target change) wakes the parked threads under the same lock afterwards, so a thread that decided to
    /// follow on a stale value is woken.
    /// </param>
    public ParkingLot(Func<bool> hasWork, Func<bool> mayLead)
    {
        _hasWork = hasWork;
        _mayLead = mayLead;
    }

    /// <summary>Gets the number of parked threads, the leader included.</summary>
    public int ParkedCount => Volatile.Read(ref _parked);

    public bool HasLeader => Volatile.Read(ref _leader) is not null;

    public ParkRole Park(WorkerThread thread)
    {
        lock (_lock)
        {
            Interlocked.Increment(ref _parked);
            if (_hasWork())
            {
                Interlocked.Decrement(ref _parked);
                return ParkRole.Retry;
            }

            if (_leader is null && _mayLead())
            {
                _leader = thread;
                AssertInvariants();
                return ParkRole.Leader;
            }

            _followers.Add(thread);
            AssertInvariants();
            return ParkRole.Follower;
        }
    }

    /// <summary>A follower is awake: if it timed out it is still listed, and leaves now.</summary>
    public void Unpark(WorkerThread thread)
    {
        lock (_lock)
        {
            if (_followers.Remove(thread))
            {
                Interlocked.Decrement(ref _parked);
            }

            AssertInvariants();
        }
    }

    /// <summary>
    /// The leader stops waiting on the channel; with <paramref name="handOff"/> it hands the lead to the most recently
    /// parked follower. A leader woken for a job resigns without a hand-off: it takes the job itself, and whoever writes
    /// or finds another job while nobody leads wakes a follower for it.
    /// </summary>
    public void Resign(WorkerThread thread, bool handOff)
    {
        lock (_lock)
        {
            if (_leader == thread)
            {
                _leader = null;
                Interlocked.Decrement(ref _parked);
            }

            if (handOff)
            {
                WakeFollowerLocked();
            }

            AssertInvariants();
        }
    }

    /// <summary>Wakes one parked thread for work any thread can take: a follower, else the leader.</summary>
    public void WakeOne()
    {
        if (ParkedCount == 0)
        {
            return;
        }

        lock (_lock)
        {
            if (!WakeFollowerLocked())
            {
                _leader?.Signal();
            }
        }
    }

    /// <summary>
    /// Wakes the most recently parked follower if nobody leads: for a job in the channel that no leader will see (a
    /// writer's, or one a taker found left behind), or because the leader exited.
    /// </summary>
    public void WakeFollowerIfLeaderless()
    {
        if (ParkedCount == 0 || HasLeader)
        {
            return;
        }

        lock (_lock)
        {
            if (_leader is null)
            {
                WakeFollowerLocked();
            }
        }
    }

    /// <summary>Wakes the leader, so it re-checks whether it should stand down.</summary>
    public void SignalLeader()
    {
        lock (_lock)
        {
            _leader?.Signal();
        }
    }

    public void WakeAll()
    {
        lock (_lock)
        {
            _leader?.Signal();
            foreach (var follower in _followers)
            {
                follower.Signal();
            }

            Interlocked.Add(ref _parked, -_followers.Count);
            _followers.Clear();
            AssertInvariants();
        }
    }

    /// <summary>An exiting thread leaves whatever role it had.</summary>
    public void Remove(WorkerThread thread)
    {
        lock (_lock)
        {
            if (_followers.Remove(thread))
            {
                Interlocked.Decrement(ref _parked);
            }

            if (_leader == thread)
            {
                _leader = null;
                Interlocked.Decrement(ref _parked);
            }

            AssertInvariants();
        }
    }

    private bool WakeFollowerLocked()
    {
        if (_followers.Count == 0)
        {
            return false;
        }

        var follower = _followers[^1];
        _followers.RemoveAt(_followers.Count - 1);
        Interlocked.Decrement(ref _parked);
        follower.Signal();
        return true;
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(Monitor.IsEntered(_lock), "The parking lot's state changes under its lock only.");
        Debug.Assert(_parked == _followers.Count + (_leader is null ? 0 : 1), "The parked count is the followers plus the leader.");
        Debug.Assert(_leader is null || !_followers.Contains(_leader), "The leader is not also a follower.");
        Debug.Assert(_followers.Distinct().Count() == _followers.Count, "A follower is parked once.");
    }
}
