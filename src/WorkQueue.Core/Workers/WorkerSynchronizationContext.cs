using System.Runtime.ExceptionServices;

namespace WorkQueue.Workers;

/// <summary>
/// A single-threaded synchronization context owned by one worker thread. Continuations of a job's awaits are posted
/// here and run on the worker, so an async job never parks on (or waits for) a thread-pool thread, and a worker runs at
/// most one job at a time. It is also the worker's only wait primitive: an idle worker blocks in
/// <see cref="WaitForSignal(int)"/>, which costs no CPU until it is signalled or a continuation arrives.
/// </summary>
internal sealed class WorkerSynchronizationContext : SynchronizationContext
{
    private readonly object _gate = new();
    // Pre-sized: the enqueuing thread posts the wake-up continuation here, and must not pay for the queue's first growth.
    private readonly Queue<(SendOrPostCallback Callback, object? State)> _posted = new(capacity: 16);
    private readonly Action _signal;
    private Thread? _owner;
    private bool _signaled;
    private bool _closed;
    private long _wakeups;

    public WorkerSynchronizationContext()
    {
        _signal = Signal;
    }

    /// <summary>Gets a cached delegate that calls <see cref="Signal"/>, for use as a continuation.</summary>
    public Action SignalAction => _signal;

    public void Attach(Thread owner) => _owner = owner;

    public override void Post(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        lock (_gate)
        {
            if (!_closed)
            {
                _posted.Enqueue((d, state));
                Monitor.Pulse(_gate);
                return;
            }
        }

        // The worker has retired. A job that left fire-and-forget work behind still gets its continuations run.
        ThreadPool.UnsafeQueueUserWorkItem(static s => s.d(s.state), (d, state), preferLocal: false);
    }

    public override void Send(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        if (Thread.CurrentThread == _owner)
        {
            d(state);
            return;
        }

        using var done = new ManualResetEventSlim();
        Exception? error = null;
        Post(
            _ =>
            {
                try
                {
                    d(state);
                }
                catch (Exception ex)
                {
                    error = ex;
                }
                finally
                {
                    done.Set();
                }
            },
            null);
        done.Wait();
        if (error is not null)
        {
            throw new InvalidOperationException("A callback sent to a WorkQueue worker threw.", error);
        }
    }

    public override SynchronizationContext CreateCopy() => this;

    /// <summary>Wakes the owner from <see cref="WaitForSignal(int)"/>; a signal sent while it is not waiting is kept.</summary>
    public void Signal()
    {
        lock (_gate)
        {
            _signaled = true;
            Monitor.Pulse(_gate);
        }
    }

    /// <summary>
    /// Gets how many times the owner entered or woke from a wait: a diagnostic for tests, since a parked worker must
    /// stay blocked (this stays constant) for as long as nothing is posted or signalled.
    /// </summary>
    public long Wakeups => Volatile.Read(ref _wakeups);

    /// <summary>
    /// Runs posted continuations on the calling (owner) thread until signalled or until the timeout passes. A signal
    /// wins over further continuations, so a stream of them cannot keep the owner from returning.
    /// </summary>
    /// <returns><see langword="true"/> when signalled; <see langword="false"/> when the timeout passed.</returns>
    public bool WaitForSignal(int millisecondsTimeout)
    {
        long deadline = millisecondsTimeout == Timeout.Infinite ? long.MaxValue : Environment.TickCount64 + millisecondsTimeout;
        while (true)
        {
            (SendOrPostCallback Callback, object? State) next;
            lock (_gate)
            {
                _wakeups++;
                while (_posted.Count == 0 && !_signaled)
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

                    Monitor.Wait(_gate, wait);
                    _wakeups++;
                }

                if (_signaled)
                {
                    _signaled = false;
                    return true;
                }

                next = _posted.Dequeue();
            }

            Run(next);
        }
    }

    /// <summary>Runs posted continuations until <paramref name="task"/> completes.</summary>
    public void RunUntilCompleted(ValueTask task)
    {
        if (task.IsCompleted)
        {
            return;
        }

        // Continue on this context, whatever the job left current: the completing thread then posts here directly, so
        // waking the worker never waits for a thread-pool thread.
        SetSynchronizationContext(this);
        task.GetAwaiter().UnsafeOnCompleted(_signal);
        while (!task.IsCompleted)
        {
            WaitForSignal(Timeout.Infinite);
        }
    }

    /// <summary>Stops queuing continuations here; later posts go to the thread pool. Runs any already queued.</summary>
    public void Close()
    {
        while (true)
        {
            (SendOrPostCallback Callback, object? State) next;
            lock (_gate)
            {
                if (_posted.Count == 0)
                {
                    _closed = true;
                    return;
                }

                next = _posted.Dequeue();
            }

            Run(next);
        }
    }

    /// <summary>
    /// Runs a posted continuation. One that throws is a fire-and-forget piece of a job (an <c>async void</c> method, say):
    /// awaited failures surface through the job's own task. It must neither unwind the worker nor be blamed on the job
    /// the worker is running, so it is rethrown on the thread pool, which crashes the process as an unhandled exception
    /// in <c>async void</c> code always does.
    /// </summary>
    private static void Run((SendOrPostCallback Callback, object? State) posted)
    {
        try
        {
            posted.Callback(posted.State);
        }
        catch (Exception ex)
        {
            var captured = ExceptionDispatchInfo.Capture(ex);
            ThreadPool.UnsafeQueueUserWorkItem(static e => e.Throw(), captured, preferLocal: false);
        }
    }
}
