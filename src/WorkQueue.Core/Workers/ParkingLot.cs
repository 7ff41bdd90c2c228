using System.Diagnostics;

namespace WorkQueue.Workers;

/// <summary>
/// The leader/follower protocol of one pool's idle threads. At most one thread (the leader) waits on the channel, so
/// an enqueue wakes one thread rather than every idle one (<c>WaitToReadAsync</c> wakes all its waiters); the others
/// park LIFO, so surplus threads stay parked and retire. All state changes happen under one lock, and
/// <see cref="ParkedCount"/> is published with full fences on both sides: a thread counts itself parked before it looks
/// for work one last time, a poster publishes its work before it reads the count, so one of the two sees the other.
/// </summary>
/// <remarks>
/// <para>
/// One wake-up per job (issue 21): the thread woken for a job is the one that runs it. A leader the channel wakes
/// resigns without handing the lead off (<see cref="Resign"/>) and takes the job; while it runs it, nobody waits on the
/// channel, and the next job's writer wakes a follower itself (<see cref="WakeFollowerIfLeaderless"/>, from
/// <c>WorkerPool.OnJobWritten</c>); the first thread to park with nobody leading leads again. Before, the woken leader
/// woke a follower just to lead (a second wake-up and sleep per job).
/// </para>
/// <para>
/// No lost wake-up. A job in the channel while jobs may start always has a thread on its way: (1) a leader whose wait
/// is registered is woken by the write; (2) a leader that registers later finds the job (its wait completes at once);
/// (3) a leader already woken but not yet resigned is the race: its wait is spent, and a writer that still sees it
/// leading wakes nobody. So every thread that takes a job, the resigned leader included, looks at the channel again
/// after its take and, with another job there and nobody leading, wakes a follower. The writer publishes its job, then
/// a full fence, then reads <see cref="HasLeader"/>; the leader clears itself under the lock with a full fence
/// (<see cref="Interlocked.Decrement(ref int)"/> of the count), then reads the channel: one of the two sees the other.
/// (4) A thread spinning for work (the writer then leaves the wake to it) clears its flag and then, through a full fence,
/// takes a job (and looks again after it) or parks (and leads, or follows a leader covered by 1-3). (5) A woken leader
/// that exits or retires instead of taking its job wakes a follower on its way out. (6) With jobs unable to start
/// (paused, the concurrency limit reached, the channel closing) nobody is woken: resume and target changes wake every
/// parked thread, and a thread that frees a concurrency slot looks at the channel before it parks.
/// </para>
/// </remarks>
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
