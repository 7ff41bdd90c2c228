using System.Threading.Channels;
using WorkQueue.Internal;

namespace WorkQueue.Workers;

/// <summary>
/// One dedicated worker thread. It takes jobs from the channel with <c>TryRead</c>; when the channel is empty it either
/// leads (waits in <c>WaitToReadAsync</c>, the only worker that does) or follows (parks until the pool signals it).
/// One waiting reader means an enqueue wakes one thread, not every idle worker.
/// </summary>
internal sealed class Worker
{
    private const int Idle = 0;
    private const int Running = 1;
    private const int Claimed = 2;

    // The runtime's own spin-before-block count (SpinWait's internal SpinCountforSpinBeforeWait, used by
    // SemaphoreSlim and ManualResetEventSlim).
    private const int SpinIterations = 35;

    private readonly WorkerPool _pool;
    private readonly Thread _thread;
    private CancellationTokenSource _waitCts = new();
    private CancellationTokenSource? _jobCts;
    private int _jobState;
    private int _cancelReason;
    private bool _jobHasTimer;
    private WorkItem _current;

    public Worker(WorkerPool pool, string name)
    {
        _pool = pool;
        _thread = new Thread(ThreadMain) { IsBackground = true, Name = name };
        Context.Attach(_thread);
    }

    public string Name => _thread.Name!;

    public WorkerSynchronizationContext Context { get; } = new();

    /// <summary>Gets why the current job's token was cancelled, if it was.</summary>
    public JobCancelReason CancelReason => (JobCancelReason)Volatile.Read(ref _cancelReason);

    public void Start() => _thread.Start();

    public void Signal() => Context.Signal();

    /// <summary>Marks a job as running and returns the token it runs with.</summary>
    /// <param name="item">The job.</param>
    /// <param name="timeout">The job's timeout, if any.</param>
    public CancellationToken BeginJob(in WorkItem item, TimeSpan? timeout)
    {
        _cancelReason = (int)JobCancelReason.None;
        _current = item;

        // A new source per job, never a reset or shared one: work a job left running still holds its token, and must
        // neither see a later job's timeout nor keep registrations alive on a long-lived source.
        _jobCts = timeout is { } limit ? new CancellationTokenSource(limit) : new CancellationTokenSource();
        _jobHasTimer = timeout is not null;

        // Publish Running before reading the shutdown flag; the shutdown sets its flag before scanning workers, so one
        // of the two sees the other (both are full fences).
        Interlocked.Exchange(ref _jobState, Running);
        if (_pool.IsAbandoning)
        {
            CancelForShutdown();
        }

        return _jobCts.Token;
    }

    /// <summary>Ends the current job; <see langword="false"/> when the shutdown already reported it as still running.</summary>
    public bool EndJob()
    {
        // Stop a pending timeout timer; the source itself is left to the GC because the job's leftovers may still use it.
        // Only when there is one: CancelAfter on a source without a timer would allocate one.
        if (_jobHasTimer)
        {
            _jobCts!.CancelAfter(Timeout.Infinite);
        }

        if (Interlocked.CompareExchange(ref _jobState, Idle, Running) == Running)
        {
            return true;
        }

        Volatile.Write(ref _jobState, Idle);
        return false;
    }

    /// <summary>Marks the running job as cancelled by the shutdown and cancels its token source.</summary>
    public void CancelForShutdown()
    {
        if (Volatile.Read(ref _jobState) != Running)
        {
            return;
        }

        Volatile.Write(ref _cancelReason, (int)JobCancelReason.Shutdown);

        // The token reads as cancelled at once; the job's callbacks run on the thread pool, so one that blocks (or Sends
        // to this busy worker) cannot hold up the shutdown. Their exceptions land in the returned task, unobserved.
        _ = Volatile.Read(ref _jobCts)?.CancelAsync();
    }

    /// <summary>Takes the running job away from the worker so the shutdown can report it as still running.</summary>
    public bool TryClaimStillRunning(out WorkItem item)
    {
        // Claim first, read after: _current is published before the state turns Running, so once the claim succeeds it
        // is the claimed job (reading first could pair the previous job with this claim).
        if (Interlocked.CompareExchange(ref _jobState, Claimed, Running) == Running)
        {
            item = _current;
            return true;
        }

        item = default;
        return false;
    }

    private void ThreadMain()
    {
        SynchronizationContext.SetSynchronizationContext(Context);
        try
        {
            Run();
        }
        catch (Exception ex)
        {
            // Job exceptions never get here (the queue catches them); this is a bug in the worker loop itself.
            _pool.OnWorkerFaulted(this, ex);
        }
        finally
        {
            Context.Close();
            _waitCts.Dispose();
            _pool.OnWorkerExited(this);
        }
    }

    private void Run()
    {
        var reader = _pool.Reader;
        bool justResigned = false;
        bool spunSinceWork = false;
        while (true)
        {
            // A job may have replaced the context; every job and every wait starts on this worker's own, so that
            // continuations and wake-ups come back here rather than to another context or the thread pool.
            SynchronizationContext.SetSynchronizationContext(Context);
            if (_pool.TryRetire(this, idleTimedOut: false))
            {
                return;
            }

            if (!_pool.IsPaused && reader.TryRead(out var item))
            {
                // A leader that just resigned has already handed the lead on; only others pass it.
                if (!justResigned)
                {
                    _pool.OnItemTaken();
                }

                justResigned = false;
                spunSinceWork = false;
                try
                {
                    _pool.Execute(item, this);
                }
                catch (Exception ex)
                {
                    // Only bookkeeping (a throwing logger or metrics listener) gets here, after the job was settled;
                    // the worker carries on rather than die with the queue still relying on it.
                    _pool.OnBookkeepingFailed(this, ex);
                }

                continue;
            }

            justResigned = false;
            if (reader.Completion.IsCompleted)
            {
                return;
            }

            if (!spunSinceWork && _pool.SpinBeforeParking)
            {
                spunSinceWork = true;
                if (SpinForWork())
                {
                    continue;
                }
            }

            switch (_pool.Park(this))
            {
                case ParkRole.Leader:
                    bool open = WaitAsLeader(reader);
                    _pool.Resign(this);
                    if (!open)
                    {
                        return;
                    }

                    justResigned = true;
                    break;

                case ParkRole.Follower:
                    bool signaled = Context.WaitForSignal(_pool.FollowerTimeoutMilliseconds);
                    _pool.Unpark(this);
                    if (!signaled && _pool.TryRetire(this, idleTimedOut: true))
                    {
                        return;
                    }

                    break;

                default:
                    return;
            }
        }
    }

    /// <summary>
    /// Spins briefly for a job before parking: a producer that is only just behind this worker then hands over its next
    /// job without paying for a futex wake-up, and the worker without sleeping. Bounded like SemaphoreSlim's spin, and
    /// only done by one worker at a time that would otherwise lead (if another worker already waits on the channel, it
    /// gets the next job anyway).
    /// </summary>
    /// <returns><see langword="true"/> when a job was offered meanwhile.</returns>
    private bool SpinForWork()
    {
        // One spinner at a time, once per idle period (the caller's flag): more would only compete for the next job
        // and for the producer's cores.
        if (_pool.IsPaused || _pool.HasLeader || !_pool.TryBeginSpin())
        {
            return false;
        }

        try
        {
            long seen = _pool.EnqueueVersion;
            var spinner = default(SpinWait);
            for (int i = 0; i < SpinIterations; i++)
            {
                spinner.SpinOnce(sleep1Threshold: -1);
                if (_pool.EnqueueVersion != seen)
                {
                    return true;
                }
            }

            return false;
        }
        finally
        {
            _pool.EndSpin();
        }
    }

    /// <returns><see langword="false"/> when the channel is completed and empty.</returns>
    private bool WaitAsLeader(ChannelReader<WorkItem> reader)
    {
        if (!_waitCts.TryReset())
        {
            _waitCts.Dispose();
            _waitCts = new CancellationTokenSource();
        }

        // The channel completes this wait by posting to the captured context (this worker's), straight from the
        // writing thread: waking a worker never needs a thread-pool thread.
        var wait = reader.WaitToReadAsync(_waitCts.Token);
        if (!wait.IsCompleted)
        {
            wait.GetAwaiter().UnsafeOnCompleted(Context.SignalAction);
            while (!wait.IsCompleted)
            {
                Context.WaitForSignal(Timeout.Infinite);
                if (!wait.IsCompleted && _pool.LeaderShouldStandDown(this))
                {
                    _waitCts.Cancel();
                }
            }
        }

        try
        {
            return wait.GetAwaiter().GetResult();
        }
        catch (OperationCanceledException) when (_waitCts.IsCancellationRequested)
        {
            return true;
        }
    }
}
