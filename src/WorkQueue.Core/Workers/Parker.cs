namespace WorkQueue.Workers;

/// <summary>
/// One thread's wait primitive: it blocks in <see cref="Wait(int)"/> (no CPU) until signalled or timed out; a signal
/// sent while it is not waiting is kept. It is also the synchronization context under which the leader registers its
/// channel wait: the channel then completes that wait by posting here, and <see cref="Post"/> runs the completion
/// inline on the writing thread, where all it does is <see cref="Signal"/>. Waking a thread never needs the thread pool.
/// </summary>
internal sealed class Parker : SynchronizationContext
{
    private readonly object _gate = new();
    private bool _signaled;
    private bool _blocked;
    private long _waits;
    private long _wakeUps;

    public Parker()
    {
        SignalAction = Signal;
    }

    /// <summary>Gets a cached delegate that calls <see cref="Signal"/>, for use as a continuation.</summary>
    public Action SignalAction { get; }

    /// <summary>
    /// Gets how many times the owner entered or woke from a wait: a diagnostic for tests, since a parked thread must stay
    /// blocked (this stays constant) for as long as nothing signals it.
    /// </summary>
    public long Waits => Volatile.Read(ref _waits);

    /// <summary>
    /// Gets how many times the owner was put to sleep and woken again (signalled or timed out): the kernel round trips
    /// the parking protocol costs, a diagnostic for tests.
    /// </summary>
    public long WakeUps => Volatile.Read(ref _wakeUps);

    /// <summary>Gets a value indicating whether the owner is asleep in <see cref="Wait(int)"/> now, with no signal on its way.</summary>
    public bool IsAsleep
    {
        get
        {
            lock (_gate)
            {
                return _blocked && !_signaled;
            }
        }
    }

    /// <summary>Runs the channel's completion of the leader's wait inline: it only signals this parker.</summary>
    public override void Post(SendOrPostCallback d, object? state) => d(state);

    public override SynchronizationContext CreateCopy() => this;

    public void Signal()
    {
        lock (_gate)
        {
            _signaled = true;
            Monitor.Pulse(_gate);
        }
    }

    /// <returns><see langword="true"/> when signalled; <see langword="false"/> when the timeout passed.</returns>
    public bool Wait(int millisecondsTimeout)
    {
        long deadline = millisecondsTimeout == Timeout.Infinite ? long.MaxValue : Environment.TickCount64 + millisecondsTimeout;
        lock (_gate)
        {
            _waits++;
            while (!_signaled)
            {
                int wait = Timeout.Infinite;
                if (deadline != long.MaxValue)
                {
                    long remaining = deadline - Environment.TickCount64;
                    if (remaining <= 0)
                    {
                        return false;
                    }

                    wait = (int)Math.Min(remaining, int.MaxValue);
                }

                _blocked = true;
                Monitor.Wait(_gate, wait);
                _blocked = false;
                _waits++;
                _wakeUps++;
            }

            _signaled = false;
            return true;
        }
    }
}
