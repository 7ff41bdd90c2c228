namespace WorkQueue.Tests.Support;

/// <summary>
/// A job that blocks its worker until the test opens the gate, and tells the test when each job entered, and how many
/// were inside at once.
/// </summary>
internal sealed class Gate : IDisposable
{
    private readonly ManualResetEventSlim _open = new(false);
    private readonly object _lock = new();
    private readonly List<(int Target, TaskCompletionSource Signal)> _waiters = [];
    private int _inside;
    private int _entered;
    private int _maxInside;

    public int MaxInside => Volatile.Read(ref _maxInside);

    public int Entered => Volatile.Read(ref _entered);

    /// <summary>A synchronous job that blocks until <see cref="Open"/>, ignoring its token.</summary>
    public void Block(CancellationToken cancellationToken) => Enter(() => _open.Wait());

    /// <summary>A synchronous job that blocks until <see cref="Open"/> or until its token is cancelled.</summary>
    public void BlockCancellable(CancellationToken cancellationToken) => Enter(() => _open.Wait(cancellationToken));

    /// <summary>Completes once <paramref name="count"/> jobs have entered the gate.</summary>
    public Task EnteredAsync(int count)
    {
        lock (_lock)
        {
            if (_entered >= count)
            {
                return Task.CompletedTask;
            }

            var signal = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _waiters.Add((count, signal));
            return signal.Task;
        }
    }

    /// <summary>Blocks the calling thread until <paramref name="count"/> jobs have entered, without needing the thread pool.</summary>
    public bool WaitEntered(int count, TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        lock (_lock)
        {
            while (_entered < count)
            {
                var remaining = deadline - DateTime.UtcNow;
                if (remaining <= TimeSpan.Zero)
                {
                    return false;
                }

                Monitor.Wait(_lock, remaining);
            }

            return true;
        }
    }

    public void Open() => _open.Set();

    public void Dispose()
    {
        _open.Set();
    }

    private void Enter(Action wait)
    {
        lock (_lock)
        {
            _inside++;
            _entered++;
            _maxInside = Math.Max(_maxInside, _inside);
            Monitor.PulseAll(_lock);
            foreach (var waiter in _waiters.Where(w => w.Target <= _entered).ToList())
            {
                waiter.Signal.TrySetResult();
                _waiters.Remove(waiter);
            }
        }

        try
        {
            wait();
        }
        finally
        {
            lock (_lock)
            {
                _inside--;
            }
        }
    }
}
