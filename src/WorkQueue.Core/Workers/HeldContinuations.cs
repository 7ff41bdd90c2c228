using System.Diagnostics;
using WorkQueue.Timing;

namespace WorkQueue.Workers;

/// <summary>
/// Continuations that other threads posted to a job while the job's own thread was still inside the job's synchronous
/// part, and was not waiting. Such a post alone says nothing: an async job that awaits a reply another thread delivers
/// within microseconds (a Redis reply on StackExchange.Redis's reader thread) posts its continuation while its thread is
/// still returning from the job, or still working before its await. What says "blocked" is the job's thread waiting
/// (<see cref="System.Threading.ThreadState.WaitSleepJoin"/>: <c>.Result</c>, <c>.Wait()</c> and
/// <c>GetAwaiter().GetResult()</c> end in a monitor wait once their short spin is over) inside the same synchronous
/// part while the continuation is pending. So a continuation is held until one of three things happens: the synchronous
/// part returns (the job did not block on it: it goes to the queue, like any later post), the thread is seen waiting
/// inside it (the job blocks on async code: counted and logged, and the continuation runs elsewhere so the job can
/// finish), or <see cref="HoldLimit"/> passes with the thread still running its code (spinning, or long CPU work after
/// it started the call: the continuation runs elsewhere, uncounted). A thread descheduled in the middle of returning is
/// not waiting, so it is never reported, however long it waits for a core.
/// </summary>
/// <remarks>
/// The looks at a held continuation's job run on the engine's timer thread, on real time rather than the pool's
/// <see cref="TimeProvider"/>: they wait for another thread to reach its wait, and a fake clock that never advanced would
/// hold a blocking job's continuation forever. Each look doubles the wait before the next, from <see cref="FirstLook"/>
/// up to <see cref="MaxLookInterval"/>.
/// </remarks>
internal sealed class HeldContinuations
{
    /// <summary>How long a continuation waits before the first look at its job's thread (a blocking call's spin lasts about this long).</summary>
    internal static readonly TimeSpan FirstLook = TimeSpan.FromTicks(500);

    /// <summary>The longest wait between two looks.</summary>
    internal static readonly TimeSpan MaxLookInterval = TimeSpan.FromMilliseconds(50);

    /// <summary>
    /// How long a continuation is held, at most, while its job's thread runs its code without waiting. Generous: the
    /// spin of a blocking call yields its core between spins, and on a machine with many more runnable threads than cores
    /// it lasted over 100 ms before the thread reached its wait.
    /// </summary>
    internal static readonly TimeSpan HoldLimit = TimeSpan.FromSeconds(1);

    private readonly JobRun _run;
    private readonly List<(SendOrPostCallback Callback, object? State)> _items = [];
    private readonly ITimer _timer;

    // Guarded by _items. The synchronous part the items were posted during, when they were first held, and the wait
    // before the next look.
    private int _part;
    private long _since;
    private TimeSpan _nextLook;

    // 1 while items are held: read without the lock when the synchronous part returns.
    private int _holding;

    public HeldContinuations(JobRun run)
    {
        _run = run;
        _timer = EngineTimeProvider.Instance.CreateTimer(static s => ((HeldContinuations)s!).Look(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    private enum Outcome
    {
        /// <summary>The synchronous part returned: the continuations go to the queue like any other.</summary>
        Queue,

        /// <summary>The job's thread waits inside its synchronous part: reported, and run elsewhere.</summary>
        Blocked,

        /// <summary>The job's thread still runs its code after the hold limit: run elsewhere, not reported.</summary>
        Elsewhere,
    }

    /// <summary>Gets a value indicating whether continuations are held (read by the job's thread as its synchronous part returns).</summary>
    public bool IsHolding => Volatile.Read(ref _holding) != 0;

    /// <summary>
    /// Takes a continuation that another thread posted while the job's synchronous part <paramref name="part"/> ran.
    /// </summary>
    public void Post(int part, SendOrPostCallback callback, object? state)
    {
        List<(SendOrPostCallback, object?)> taken;
        Outcome outcome;
        bool includesThis = false;
        lock (_items)
        {
            if (!_run.IsInSyncPart(part))
            {
                // The part returned meanwhile (what was held for it is released by the job's thread): a post like any other.
                taken = [];
                outcome = Outcome.Queue;
            }
            else if (IsWaitingIn(part))
            {
                // A part releases what it held before the next one begins (under this lock): what is held now was held
                // during this part, and waits for the same blocked thread.
                Debug.Assert(_items.Count == 0 || _part == part, "Continuations held for a part that returned.");
                taken = Take();
                outcome = Outcome.Blocked;
            }
            else
            {
                _items.Add((callback, state));
                if (_items.Count == 1)
                {
                    _part = part;
                    _since = Stopwatch.GetTimestamp();
                    _nextLook = FirstLook;
                }

                // Publish the hold before reading the part again; the job's thread ends the part before it reads the hold
                // (both full fences), so either it releases the continuation or this sees the part over and does.
                Interlocked.Exchange(ref _holding, 1);
                if (_run.IsInSyncPart(part))
                {
                    if (_items.Count == 1)
                    {
                        _timer.Change(_nextLook, Timeout.InfiniteTimeSpan);
                    }

                    return;
                }

                // Taken back with whatever else was held (this one included), and queued below.
                taken = Take();
                outcome = Outcome.Queue;
                includesThis = true;
            }
        }

        if (!includesThis)
        {
            taken.Add((callback, state));
        }

        Dispatch(taken, outcome);
    }

    /// <summary>Sends what is held to the queue: the job's synchronous part returned, so it did not block on it.</summary>
    public void ReleaseToQueue()
    {
        List<(SendOrPostCallback, object?)> taken;
        lock (_items)
        {
            taken = Take();
        }

        Dispatch(taken, Outcome.Queue);
    }

    /// <summary>Looks at the job's thread again (on the engine's timer thread).</summary>
    private void Look()
    {
        List<(SendOrPostCallback, object?)> taken;
        Outcome outcome;
        lock (_items)
        {
            if (_items.Count == 0)
            {
                return;
            }

            if (!_run.IsInSyncPart(_part))
            {
                outcome = Outcome.Queue;
            }
            else if (IsWaitingIn(_part))
            {
                outcome = Outcome.Blocked;
            }
            else if (Stopwatch.GetElapsedTime(_since) >= HoldLimit)
            {
                outcome = Outcome.Elsewhere;
            }
            else
            {
                _nextLook = TimeSpan.FromTicks(Math.Min(_nextLook.Ticks * 2, MaxLookInterval.Ticks));
                _timer.Change(_nextLook, Timeout.InfiniteTimeSpan);
                return;
            }

            taken = Take();
        }

        Dispatch(taken, outcome);
    }

    /// <summary>Whether the job's thread waits, and was inside <paramref name="part"/> before and after it was seen waiting.</summary>
    private bool IsWaitingIn(int part) =>
        (_run.SyncThread.ThreadState & System.Threading.ThreadState.WaitSleepJoin) != 0 && _run.IsInSyncPart(part);

    private List<(SendOrPostCallback, object?)> Take()
    {
        var taken = new List<(SendOrPostCallback, object?)>(_items);
        _items.Clear();
        Volatile.Write(ref _holding, 0);
        return taken;
    }

    private void Dispatch(List<(SendOrPostCallback Callback, object? State)> taken, Outcome outcome)
    {
        if (outcome == Outcome.Blocked)
        {
            // Before the continuations run, so the job cannot end before it is counted (the report never throws).
            _run.Pool.OnSyncPartBlocked(_run, taken.Count);
        }

        foreach (var (callback, state) in taken)
        {
            if (outcome == Outcome.Queue)
            {
                _run.Pool.Post(_run, callback, state);
            }
            else
            {
                _run.RunElsewhere(callback, state);
            }
        }
    }
}
