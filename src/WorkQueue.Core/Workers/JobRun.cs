using System.Diagnostics;
using WorkQueue.Internal;

namespace WorkQueue.Workers;

/// <summary>
/// One running attempt of a job, and the synchronization context its code runs under. Continuations of the job's
/// awaits are posted here and go to the pool's ready queue, so they run on any of the queue's threads and never on the
/// CLR thread pool; the exception is a continuation that another thread posts while the job's own thread waits inside
/// the job's synchronous part (sync-over-async) and no queue thread is idle (see <see cref="Post"/>). A thread reuses its
/// run for job after job when jobs complete synchronously, so those allocate nothing; a run whose job yielded belongs to
/// that job.
/// </summary>
internal sealed class JobRun : SynchronizationContext
{
    private const int Idle = 0;
    private const int Running = 1;
    private const int Claimed = 2;

    private readonly WorkerPool _pool;
    private CancellationTokenSource _cts = new();
    private ITimer? _timeoutTimer;
    private int _state;
    private int _cancelReason;
    // The source was handed out (a timeout, a tracked or durable job): never reset nor reused; the next Begin makes one.
    private bool _ctsHandedOut;

    // The thread that runs the jobs' synchronous parts: a run is begun only by the thread that rented it.
    private Thread? _syncThread;

    // Odd while a job's synchronous part runs, even once it returned. Each part has its own number, so a continuation held
    // during one part is never judged by the next job's part on the same run.
    private int _syncPart;
    private HeldContinuations? _held;

    public JobRun(WorkerPool pool)
    {
        _pool = pool;
        CompletedAction = OnTaskCompleted;
    }

    /// <summary>Gets the pool the run belongs to.</summary>
    public WorkerPool Pool => _pool;

    /// <summary>Gets the continuation registered on a yielded job's task.</summary>
    public Action CompletedAction { get; }

    public WorkItem Item { get; private set; }

    /// <summary>Gets the <see cref="TimeProvider"/> timestamp at which the attempt started.</summary>
    public long StartTimestamp { get; private set; }

    /// <summary>Gets or sets the attempt's span, when someone listens.</summary>
    public System.Diagnostics.Activity? Trace { get; set; }

    /// <summary>Gets or sets the yielded job's task, awaited once when it completes.</summary>
    public ValueTask Task { get; set; }

    /// <summary>Gets the thread that runs the synchronous parts of this run's jobs.</summary>
    public Thread SyncThread => _syncThread!;

    /// <summary>Gets or sets a value indicating whether the job yielded (and is listed in the pool's yielded runs).</summary>
    public bool Yielded { get; set; }

    // The pool's list of yielded runs, guarded by its lock.
    public JobRun? Previous { get; set; }

    public JobRun? Next { get; set; }

    /// <summary>Gets or sets 1 once the run was reported as stuck (set by the pool's monitor).</summary>
    public int StuckReported;

    /// <summary>Gets or sets a value indicating whether every thread of the queue was blocked while this job held one.</summary>
    public volatile bool Blocked;

    public bool IsRunning => Volatile.Read(ref _state) == Running;

    public JobCancelReason CancelReason => (JobCancelReason)Volatile.Read(ref _cancelReason);

    public CancellationToken Begin(in WorkItem item, long startTimestamp, TimeSpan? timeout, TimeProvider time)
    {
        Item = item;
        StartTimestamp = startTimestamp;
        _cancelReason = (int)JobCancelReason.None;
        StuckReported = 0;
        Blocked = false;
        Yielded = false;
        _syncThread = Thread.CurrentThread;
        Debug.Assert((_syncPart & 1) == 0, "The last job's synchronous part did not end.");
        Volatile.Write(ref _syncPart, _syncPart + 1);

        // A source with a timer is never reused: a timer that fires as the job ends must not cancel the next job. Nor is
        // a tracked job's, or a durable job's, which a cancel by id may reach after the job ended.
        var remote = item.Target as Durability.IRemoteCancellable;
        if (timeout is not null || item.Tracked is not null || remote is not null)
        {
            _cts = new CancellationTokenSource();
            _ctsHandedOut = true;
        }
        else if (_ctsHandedOut)
        {
            // The last job's source was handed out: this one gets its own, made only now (a run of durable jobs, each
            // with a source of its own, made two a job when the end of one made the next one's in advance).
            _cts = new CancellationTokenSource();
            _ctsHandedOut = false;
        }

        item.Tracked?.AttachCancellation(_cts);
        remote?.AttachCancellation(_cts);

        // Publish Running before reading the shutdown flag; the shutdown sets its flag before scanning runs, so one of
        // the two sees the other (both are full fences).
        Interlocked.Exchange(ref _state, Running);
        if (timeout is { } limit)
        {
            _timeoutTimer = time.CreateTimer(static s => ((TimeoutArm)s!).Fire(), new TimeoutArm(this, _cts), limit, Timeout.InfiniteTimeSpan);
        }

        if (_pool.IsAbandoning)
        {
            CancelForShutdown();
        }

        return _cts.Token;
    }

    /// <summary>Gets a value indicating whether the job's synchronous part numbered <paramref name="part"/> still runs.</summary>
    public bool IsInSyncPart(int part) => Volatile.Read(ref _syncPart) == part;

    /// <summary>Marks the job's synchronous part as returned; continuations held during it go to the queue.</summary>
    public void EndSyncPart()
    {
        // A full fence between ending the part and reading the hold, as a poster has between holding and reading the part
        // again: either the poster sees the part over, or this sees what it held.
        Interlocked.Increment(ref _syncPart);
        if (Volatile.Read(ref _held) is { IsHolding: true } held)
        {
            held.ReleaseToQueue();
        }
    }

    /// <summary>Ends the attempt; <see langword="false"/> when the shutdown already reported it as still running.</summary>
    public bool End()
    {
        if (_timeoutTimer is { } timer)
        {
            timer.Dispose();
            _timeoutTimer = null;
        }

        if (Interlocked.CompareExchange(ref _state, Idle, Running) == Running)
        {
            return true;
        }

        Volatile.Write(ref _state, Idle);
        return false;
    }

    /// <summary>Readies a run whose job completed synchronously for the thread's next job.</summary>
    public void Recycle()
    {
        // A source nobody cancelled is reset (its leftover registrations are dropped), as Kestrel does per request; one
        // that was handed out is left alone (the next Begin replaces it).
        if (!_ctsHandedOut && !_cts.TryReset())
        {
            _cts = new CancellationTokenSource();
        }

        Item = default;
        Task = default;
        Trace = null;
    }

    /// <summary>Marks the running job as cancelled by the shutdown and cancels its token.</summary>
    public void CancelForShutdown()
    {
        if (Volatile.Read(ref _state) != Running)
        {
            return;
        }

        Volatile.Write(ref _cancelReason, (int)JobCancelReason.Shutdown);

        // The token reads as cancelled at once; the job's callbacks run on the thread pool, so one that blocks cannot
        // hold up the shutdown. Their exceptions land in the returned task, unobserved.
        _ = _cts.CancelAsync();
    }

    /// <summary>Takes the running job away so the shutdown can report it as still running.</summary>
    public bool TryClaimStillRunning(out WorkItem item)
    {
        // Claim first, read after: Item is written before the state turns Running.
        if (Interlocked.CompareExchange(ref _state, Claimed, Running) == Running)
        {
            item = Item;
            return true;
        }

        item = default;
        return false;
    }

    /// <summary>
    /// Queues a continuation of this job's code. It goes to the pool's ready queue (any queue thread runs it), except
    /// when another thread posts while the job's own thread is still inside the job's synchronous part: then it waits
    /// for that part to return, unless the job's thread waits inside it, blocked on async code (<c>.Result</c> on a
    /// method that did not use <c>ConfigureAwait(false)</c>) perhaps waiting for exactly this continuation; that one
    /// runs elsewhere and the pool is told (counted, logged once per job type). See <see cref="HeldContinuations"/>.
    /// </summary>
    public override void Post(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        int part = Volatile.Read(ref _syncPart);
        if ((part & 1) != 0 && _syncThread != Thread.CurrentThread)
        {
            (Volatile.Read(ref _held) ?? CreateHeld()).Post(part, d, state);
            return;
        }

        _pool.Post(this, d, state);
    }

    /// <summary>
    /// Runs a continuation away from the job's thread, which is still inside the job: on an idle queue thread if there
    /// is one, else on the thread pool, where an await without a context would have resumed.
    /// </summary>
    public void RunElsewhere(SendOrPostCallback callback, object? state)
    {
        if (_pool.HasIdleThread)
        {
            _pool.Post(this, callback, state);
            return;
        }

        ThreadPool.UnsafeQueueUserWorkItem(static s => s.Run.RunOnThreadPool(s.Callback, s.State), (Run: this, Callback: callback, State: state), preferLocal: false);
    }

    public override SynchronizationContext CreateCopy() => this;

    /// <summary>Runs a continuation of this job on a thread-pool thread, under this context.</summary>
    public void RunOnThreadPool(SendOrPostCallback callback, object? state)
    {
        // The job's later awaits capture this context again, so once its thread is free they come back to the queue.
        var previous = Current;
        SetSynchronizationContext(this);
        try
        {
            callback(state);
        }
        finally
        {
            SetSynchronizationContext(previous);
        }
    }

    private void OnTaskCompleted() => _pool.OnYieldedJobCompleted(this);

    private HeldContinuations CreateHeld()
    {
        var held = new HeldContinuations(this);
        return Interlocked.CompareExchange(ref _held, held, null) ?? held;
    }

    /// <summary>Cancels one attempt's token when its timeout passes, unless the attempt has ended.</summary>
    private sealed class TimeoutArm(JobRun run, CancellationTokenSource cts)
    {
        public void Fire()
        {
            if (!run.IsRunning || !ReferenceEquals(Volatile.Read(ref run._cts), cts))
            {
                return;
            }

            Interlocked.CompareExchange(ref run._cancelReason, (int)JobCancelReason.Timeout, (int)JobCancelReason.None);
            if (!run.IsRunning || !ReferenceEquals(Volatile.Read(ref run._cts), cts))
            {
                // The attempt ended (and the run may have begun the next) between the check and the mark: undo it.
                Interlocked.CompareExchange(ref run._cancelReason, (int)JobCancelReason.None, (int)JobCancelReason.Timeout);
                return;
            }

            _ = cts.CancelAsync();
            Debug.Assert(cts.IsCancellationRequested, "CancelAsync flips the token before it returns.");
        }
    }
}
