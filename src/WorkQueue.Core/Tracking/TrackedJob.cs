using System.Diagnostics;
using WorkQueue.Internal;

namespace WorkQueue.Tracking;

/// <summary>
/// One tracked job's state machine: pending (queued, scheduled, retrying) -> running -> pending ... -> one ending. The
/// state changes by compare-and-swap only, so that of a cancel and a thread starting the job exactly one wins, and of
/// all the ways a job can end (<see cref="TryEnd"/>, called only by the ledger) exactly one counts.
/// </summary>
/// <remarks>
/// The descriptive fields (times, worker, error) are written around the state change and read without a lock: a status
/// read as the job moves may pair the new state with the previous attempt's details. A status is a report, not a lock.
/// </remarks>
internal sealed class TrackedJob
{
    private readonly JobTracker _owner;
    private readonly JobInvoker _invoker;
    private object? _target;
    private object? _payload;
    private string? _name;
    private int _state;
    private int _cancelRequested;
    private int _forgotten;
    private CancellationTokenSource? _running;
    private long _stateSinceTicks;
    private long _runAtTicks;
    private long _startedAtTicks;
    private int _attempt;
    private string? _worker;
    private string? _lastError;

    public TrackedJob(JobTracker owner, long id, JobInvoker invoker, object? target, string? key, DateTimeOffset now, DateTimeOffset? runAt, object? payload = null)
    {
        _owner = owner;
        Id = id;
        _invoker = invoker;
        _target = target;
        _payload = payload;
        Key = key;
        EnqueuedAt = now;
        _stateSinceTicks = now.UtcTicks;
        if (runAt is { } at && at > now)
        {
            _state = (int)JobState.Scheduled;
            _runAtTicks = at.UtcTicks;
        }
        else
        {
            _state = (int)JobState.Queued;
        }
    }

    public long Id { get; }

    /// <summary>Gets the job's idempotency key, released when it ends.</summary>
    public string? Key { get; }

    public DateTimeOffset EnqueuedAt { get; }

    public JobState State => (JobState)Volatile.Read(ref _state);

    public bool IsEnded => IsEnding(State);

    public bool CancelRequested => Volatile.Read(ref _cancelRequested) == 1;

    /// <summary>Gets the <see cref="TimeProvider"/> timestamp at which the job ended (set before it is listed as ended).</summary>
    public long EndedTimestamp { get; private set; }

    /// <summary>Gets or sets the job's place among the queue's endings (set by the tracker, under its lock, as it ends).</summary>
    public long EndSequence { get; set; }

    /// <summary>Gets or sets the job's place among the queue's tracked jobs (set by the tracker, under its lock, as it is accepted).</summary>
    public long TrackSequence { get; set; }

    /// <summary>Gets a value indicating whether the job is no longer in flight: it ended, or its enqueue was refused.</summary>
    public bool IsGone => IsEnded || Volatile.Read(ref _forgotten) != 0;

    /// <summary>Gets the handler type or delegate method that runs the job, worked out once.</summary>
    public string Name
    {
        get
        {
            if (_name is { } name)
            {
                return name;
            }

            name = Describe();
            if (name.Length > 0)
            {
                _name = name;
            }

            return name;
        }
    }

    /// <summary>Gets the message of the exception the job's last failed attempt threw, if any.</summary>
    public string? LastError => Volatile.Read(ref _lastError);

    public static bool IsEnding(JobState state) => state >= JobState.Succeeded;

    private static bool IsPending(JobState state) => state is JobState.Queued or JobState.Scheduled or JobState.Retrying;

    /// <summary>The enqueue that tracked the job was refused: it never was a job.</summary>
    public void MarkForgotten() => Volatile.Write(ref _forgotten, 1);

    /// <summary>A scheduled job came due, or a retry's delay passed: it waits for a thread now.</summary>
    /// <returns><see langword="false"/> if the job has ended (it was cancelled): it must not be handed to the threads.</returns>
    public bool TryMarkQueued()
    {
        while (true)
        {
            var state = State;
            if (IsEnding(state))
            {
                return false;
            }

            if (state == JobState.Queued || Transition(state, JobState.Queued))
            {
                return true;
            }
        }
    }

    /// <summary>A thread is about to start the job.</summary>
    /// <returns><see langword="false"/> if the job ended first (it was cancelled): it must not run.</returns>
    public bool TryStart(int attempt, string? worker)
    {
        while (true)
        {
            var state = State;
            if (!IsPending(state))
            {
                Debug.Assert(state != JobState.Running, "A job is started by one thread at a time.");
                return false;
            }

            // The details are written once the start has won, so a job cancelled first never shows an attempt; a status
            // read in between shows Running with the previous attempt's details.
            var now = _owner.Now;
            if (Transition(state, JobState.Running, now))
            {
                _attempt = attempt;
                _worker = worker;
                Volatile.Write(ref _startedAtTicks, now.UtcTicks);
                return true;
            }
        }
    }

    /// <summary>
    /// Gives the running attempt's token source, so a cancel can reach it. The source is used by this attempt only (the
    /// run takes a fresh one for a tracked job), so cancelling it late can never touch another job.
    /// </summary>
    public void AttachCancellation(CancellationTokenSource source)
    {
        // Publish the source before reading the flag; a cancel sets the flag before reading the source (both full
        // fences), so at least one of the two cancels it.
        Interlocked.Exchange(ref _running, source);
        if (CancelRequested)
        {
            _ = source.CancelAsync();
        }
    }

    /// <summary>Asks the running attempt to stop: marks the job and cancels the attempt's token, if it has one yet.</summary>
    public void RequestCancel()
    {
        Interlocked.Exchange(ref _cancelRequested, 1);
        if (Volatile.Read(ref _running) is { } source)
        {
            // Callbacks registered on the token run on the thread pool, not on the caller's (an admin request's) thread.
            _ = source.CancelAsync();
        }
    }

    /// <summary>The attempt failed and the job will be retried at <paramref name="runAt"/>.</summary>
    /// <returns>
    /// <see langword="false"/> if a cancel was requested: the caller must not schedule the retry (and ends the job as
    /// cancelled, unless the cancel did first).
    /// </returns>
    public bool TryMarkRetrying(string error, DateTimeOffset runAt)
    {
        _lastError = error;
        Volatile.Write(ref _runAtTicks, runAt.UtcTicks);
        Volatile.Write(ref _running, null);

        // The state turns Retrying before the flag is read; a cancel sets the flag before it reads the state, so a
        // cancel that sees Running is seen here, and one that comes later sees Retrying and cancels the job itself.
        if (!Transition(JobState.Running, JobState.Retrying))
        {
            return !IsEnded;
        }

        return !CancelRequested;
    }

    /// <summary>Records the error of the attempt that ends the job (dead letter).</summary>
    public void SetError(string error) => _lastError = error;

    /// <summary>
    /// Ends the job, once: the ledger calls this for every ending and counts it only if it returns <see langword="true"/>.
    /// </summary>
    /// <param name="ending">The ending.</param>
    /// <param name="beforeStartOnly">Only a job that is not running may end this way (a cancel of a pending job).</param>
    public bool TryEnd(JobState ending, bool beforeStartOnly = false)
    {
        Debug.Assert(IsEnding(ending), "An ending is one of the final states.");
        while (true)
        {
            var state = State;
            if (IsEnding(state) || (beforeStartOnly && !IsPending(state)))
            {
                return false;
            }

            var now = _owner.Now;
            EndedTimestamp = _owner.Timestamp;
            if (Transition(state, ending, now))
            {
                _name ??= Describe();
                _target = null;
                _payload = null;
                Volatile.Write(ref _running, null);
                _owner.OnEnded(this);
                return true;
            }
        }
    }

    public JobStatus Describe(string queue)
    {
        var state = State;
        long runAt = Volatile.Read(ref _runAtTicks);
        long startedAt = Volatile.Read(ref _startedAtTicks);
        return new JobStatus(
            JobIds.Format(Id),
            queue,
            _name ?? Describe(),
            state,
            _attempt,
            EnqueuedAt,
            new DateTimeOffset(Volatile.Read(ref _stateSinceTicks), TimeSpan.Zero),
            runAt == 0 ? null : new DateTimeOffset(runAt, TimeSpan.Zero),
            startedAt == 0 ? null : new DateTimeOffset(startedAt, TimeSpan.Zero),
            _worker,
            _lastError,
            CancelRequested)
        {
            Payload = Volatile.Read(ref _payload),
        };
    }

    private string Describe()
    {
        // The target is dropped when the job ends (after its name was taken), so a kept status holds no payload alive.
        try
        {
            return _name ?? _invoker.Describe(Volatile.Read(ref _target));
        }
        catch (Exception)
        {
            return _name ?? string.Empty;
        }
    }

    private bool Transition(JobState from, JobState to) => Transition(from, to, _owner.Now);

    private bool Transition(JobState from, JobState to, DateTimeOffset now)
    {
        if (Interlocked.CompareExchange(ref _state, (int)to, (int)from) != (int)from)
        {
            return false;
        }

        Volatile.Write(ref _stateSinceTicks, now.UtcTicks);
        return true;
    }
}
