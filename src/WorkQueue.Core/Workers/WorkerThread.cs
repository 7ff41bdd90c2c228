using System.Threading.Channels;
using WorkQueue.Internal;

namespace WorkQueue.Workers;

/// <summary>
/// One dedicated thread of a pool. It runs waiting continuations first (they finish jobs already running), then starts
/// new jobs while the queue is under its concurrency limit; with nothing to do it parks as the leader (the one thread
/// waiting on the channel) or as a follower.
/// </summary>
internal sealed class WorkerThread
{
    // The runtime's own spin-before-block count (SpinWait's SpinCountforSpinBeforeWait, used by SemaphoreSlim).
    private const int SpinIterations = 35;

    [ThreadStatic]
    private static WorkerThread? t_current;

    private readonly Thread _thread;
    private readonly Parker _parker = new();
    private readonly Action _channelWaitCompleted;
    private ValueTask<bool> _channelWait;
    private int _channelWaitPending;
    private int _leading;
    private JobRun? _spareRun;
    private ExecutionContext? _baseContext;
    private JobRun? _codeRun;
    private long _codeSince;
    private long _lastEnd;

    public WorkerThread(WorkerPool pool, string name)
    {
        Pool = pool;
        Name = name;
        _thread = new Thread(ThreadMain) { IsBackground = true, Name = name };
        _channelWaitCompleted = OnChannelWaitCompleted;
    }

    /// <summary>Gets the queue thread the caller runs on, if any.</summary>
    public static WorkerThread? Current => t_current;

    public WorkerPool Pool { get; }

    public string Name { get; }

    public Thread Thread => _thread;

    public long Waits => _parker.Waits;

    public long WakeUps => _parker.WakeUps;

    public bool IsAsleep => _parker.IsAsleep;

    /// <summary>Gets the run whose code this thread is executing now, or <see langword="null"/>.</summary>
    public JobRun? CodeRun => Volatile.Read(ref _codeRun);

    /// <summary>Gets the timestamp at which the thread started executing <see cref="CodeRun"/>'s code.</summary>
    public long CodeSince => Volatile.Read(ref _codeSince);

    public void Start() => _thread.UnsafeStart();

    public void Signal() => _parker.Signal();

    /// <summary>Gets a run for the next job: the thread's spare one, or a new one when its last job kept it.</summary>
    public JobRun RentRun() => _spareRun ??= new JobRun(Pool);

    /// <summary>The job yielded and keeps its run; the thread takes a new one next time.</summary>
    public void GiveUpRun() => _spareRun = null;

    public void EnterCode(JobRun run, long timestamp)
    {
        Volatile.Write(ref _codeSince, timestamp);
        Volatile.Write(ref _codeRun, run);
    }

    public void ExitCode() => Volatile.Write(ref _codeRun, null);

    /// <summary>Remembers when the job this thread just ran ended, for a next job started straight after.</summary>
    public void SetLastEnd(long timestamp) => _lastEnd = timestamp;

    /// <summary>Takes the end of the job this thread ran last, if nothing else ran or waited since; otherwise 0.</summary>
    public long TakeLastEnd()
    {
        long end = _lastEnd;
        _lastEnd = 0;
        return end;
    }

    private void ThreadMain()
    {
        t_current = this;
        Pool.OnThreadStarted();

        // Every job and continuation starts from this context: what one job left behind in it (an AsyncLocal set in
        // synchronous code) does not leak into the next.
        _baseContext = ExecutionContext.Capture();
        try
        {
            Run();
        }
        catch (Exception ex)
        {
            // Job exceptions never get here (the pool catches them); this is a bug in the loop itself.
            Pool.OnThreadFaulted(this, ex);
        }
        finally
        {
            Pool.OnThreadExited(this);
        }
    }

    private void Run()
    {
        var reader = Pool.Reader;
        bool spunSinceWork = false;
        while (true)
        {
            if (_baseContext is not null)
            {
                ExecutionContext.Restore(_baseContext);
            }

            SynchronizationContext.SetSynchronizationContext(null);
            if (Pool.TryRunContinuation(this))
            {
                _lastEnd = 0;
                spunSinceWork = false;
                continue;
            }

            if (Pool.TryRetire(this, idleTimedOut: false))
            {
                return;
            }

            if (Pool.TryStartJob(this))
            {
                spunSinceWork = false;
                continue;
            }

            _lastEnd = 0;
            if (Pool.ShouldExit)
            {
                return;
            }

            if (!spunSinceWork && Pool.SpinBeforeParking)
            {
                spunSinceWork = true;
                if (SpinForWork())
                {
                    continue;
                }
            }

            switch (Pool.Park(this))
            {
                case ParkRole.Leader:
                    Pool.Resign(this, woken: WaitAsLeader(reader));
                    break;

                case ParkRole.Follower:
                    bool signaled = _parker.Wait(Pool.FollowerTimeoutMilliseconds);
                    Pool.Unpark(this);
                    if (!signaled && Pool.TryRetire(this, idleTimedOut: true))
                    {
                        return;
                    }

                    break;

                default:
                    break;
            }
        }
    }

    /// <summary>
    /// Spins briefly for a job before parking, so a producer just behind this thread hands over its next job without a
    /// futex wake-up. Bounded like SemaphoreSlim's spin, by one thread at a time, once per idle period.
    /// </summary>
    private bool SpinForWork()
    {
        if (!Pool.CanStartJobs || Pool.HasLeader || !Pool.TryBeginSpin())
        {
            return false;
        }

        try
        {
            long seen = Pool.Offers;
            var spinner = default(SpinWait);
            for (int i = 0; i < SpinIterations; i++)
            {
                spinner.SpinOnce(sleep1Threshold: -1);
                if (Pool.Offers != seen || Pool.HasReadyWork)
                {
                    return true;
                }
            }

            return false;
        }
        finally
        {
            Pool.EndSpin();
        }
    }

    /// <summary>
    /// Waits on the channel until it has a job (or completes), or until the pool asks the leader to stand down. The wait
    /// takes no token: a cancellable <c>WaitToReadAsync</c> is never pooled by the channel (96 bytes per park, plus a
    /// registration on the token to make and undo around every wake-up), while one without a token reuses the channel's
    /// single waiter. So standing down does not cancel the wait; it stays registered, this thread picks it up again the
    /// next time it leads, and when the channel completes it, <see cref="OnChannelWaitCompleted"/> consumes it (which
    /// hands the channel its waiter back) and wakes this thread only if it is leading then.
    /// </summary>
    /// <returns><see langword="true"/> if the channel has a job (or completed); <see langword="false"/> if it stood down.</returns>
    private bool WaitAsLeader(ChannelReader<WorkItem> reader)
    {
        // Publish that this thread leads before reading whether its wait is still pending; the completion clears
        // "pending" before it reads "leading" (both full fences), so one of the two sees the other.
        Interlocked.Exchange(ref _leading, 1);
        try
        {
            if (Volatile.Read(ref _channelWaitPending) == 0)
            {
                var wait = reader.WaitToReadAsync();
                if (wait.IsCompleted)
                {
                    Consume(wait);
                    return true;
                }

                // Registered under the parker's context: the channel completes the wait by posting there, and the parker
                // runs that inline on the writing thread. The wait is stored and marked pending before it is registered,
                // since the completion may run at once on another thread.
                _channelWait = wait;
                Volatile.Write(ref _channelWaitPending, 1);
                SynchronizationContext.SetSynchronizationContext(_parker);
                wait.GetAwaiter().UnsafeOnCompleted(_channelWaitCompleted);
                SynchronizationContext.SetSynchronizationContext(null);
            }

            while (Volatile.Read(ref _channelWaitPending) == 1)
            {
                _parker.Wait(Timeout.Infinite);
                if (Volatile.Read(ref _channelWaitPending) == 1 && Pool.LeaderShouldStandDown)
                {
                    return false;
                }
            }

            return true;
        }
        finally
        {
            Volatile.Write(ref _leading, 0);
        }
    }

    /// <summary>Runs inline on the thread that completed the channel wait (a writer, or the one completing the channel).</summary>
    private void OnChannelWaitCompleted()
    {
        var wait = _channelWait;
        _channelWait = default;
        Consume(wait);
        Interlocked.Exchange(ref _channelWaitPending, 0);
        if (Volatile.Read(ref _leading) == 1)
        {
            _parker.Signal();
        }
    }

    private static void Consume(ValueTask<bool> wait)
    {
        // Reading the result hands a pooled waiter back to the channel. A wait ends in an exception only if the channel
        // was completed with one, which the queue never does; such a wait is left unread.
        if (wait.IsCompletedSuccessfully)
        {
            _ = wait.Result;
        }
    }
}
