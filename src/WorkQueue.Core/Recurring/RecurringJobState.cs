namespace WorkQueue.Recurring;

/// <summary>
/// One recurring job at runtime: its definition, its timer (on the engine's clock), whether it is paused, when it runs
/// next and how its latest occurrence went. Guarded by its own lock; the timer's callback and the manager's calls meet here.
/// </summary>
internal sealed class RecurringJobState : IDisposable
{
    private readonly Lock _lock = new();
    private readonly TimeProvider _time;
    private readonly ITimer _timer;
    private RecurringOccurrence? _latest;
    private RecurringRun? _lastRun;
    private DateTimeOffset? _next;
    private bool _paused;
    private readonly TaskCompletionSource _scheduleStored = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private bool _pausedInStore;
    private long _supersededGeneration;
    private bool _disposed;

    public RecurringJobState(RecurringJobDefinition definition, TimeProvider time, Action<RecurringJobState, RecurringOccurrence> fire)
    {
        Definition = definition;
        _time = time;
        _paused = definition.StartPaused;
        _timer = time.CreateTimer(static s => ((RecurringJobState)s!).OnTimer(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        Fire = fire;
    }

    public RecurringJobDefinition Definition { get; }

    /// <summary>Gets the clock the job fires on: the engine's, or for a durable job its store's (<see cref="RecurringStoreClock"/>).</summary>
    public TimeProvider Time => _time;

    /// <summary>Gets or sets how the job came: registered (in code, or before the start) or added at runtime; set by the manager under its lock.</summary>
    public Durability.RecurringScheduleChange Origin { get; set; }

    /// <summary>Gets a task that completes once the first write of the job's schedule to its store was tried (at once for an in-memory job).</summary>
    public Task ScheduleStored => _scheduleStored.Task;

    /// <summary>Gets a value indicating whether the job was removed or stopped.</summary>
    public bool IsDisposed
    {
        get
        {
            lock (_lock)
            {
                return _disposed;
            }
        }
    }

    /// <summary>Gets a value indicating whether the job is paused.</summary>
    public bool IsPaused
    {
        get
        {
            lock (_lock)
            {
                return _paused;
            }
        }
    }

    private Action<RecurringJobState, RecurringOccurrence> Fire { get; }

    /// <summary>Arms the timer for the first occurrence after now (unless paused or disposed).</summary>
    private void Start()
    {
        lock (_lock)
        {
            ScheduleNextLocked(_time.GetUtcNow());
        }
    }

    public void Pause()
    {
        lock (_lock)
        {
            _paused = true;
            _next = null;
            _timer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        }
    }

    public void Resume()
    {
        lock (_lock)
        {
            _pausedInStore = false;
            if (_paused)
            {
                _paused = false;
                ScheduleNextLocked(_time.GetUtcNow());
            }
        }
    }

    /// <summary>Makes the occurrence the latest one: called just before it is enqueued.</summary>
    public void OnFiring(RecurringOccurrence occurrence)
    {
        lock (_lock)
        {
            _latest = occurrence;
            _lastRun = new RecurringRun(occurrence.ScheduledFor, null, RecurringRunOutcome.Enqueued, null, null, null);
        }
    }

    public void OnEnqueued(RecurringOccurrence occurrence, string jobId)
    {
        ClearPausedInStore(occurrence);
        Update(occurrence, run => run with { JobId = jobId, Error = run.Outcome == RecurringRunOutcome.Enqueued ? null : run.Error });
    }

    public void OnEnqueuedElsewhere(RecurringOccurrence occurrence)
    {
        ClearPausedInStore(occurrence);
        Update(occurrence, run => run with { Outcome = RecurringRunOutcome.EnqueuedElsewhere });
    }

    /// <summary>The store refused the occurrence: the job is paused there (by some instance); this one shows it paused until an offer is taken again.</summary>
    public void OnPausedInStore(RecurringOccurrence occurrence)
    {
        lock (_lock)
        {
            _pausedInStore = true;
        }

        Update(occurrence, run => run with { Outcome = RecurringRunOutcome.Skipped, Error = "paused in the store (by an instance, before a restart or now): Resume on any instance lifts it" });
    }

    private void ClearPausedInStore(RecurringOccurrence occurrence)
    {
        if (occurrence.IsTriggeredManually)
        {
            return;
        }

        lock (_lock)
        {
            _pausedInStore = false;
            _supersededGeneration = 0;
        }
    }

    /// <summary>
    /// The first write of the job's schedule to its store was tried (or the job is in memory): the timer is armed (see
    /// <see cref="Start"/>), and offers may go.
    /// </summary>
    public void OnScheduleStored()
    {
        if (_scheduleStored.TrySetResult())
        {
            Start();
        }
    }

    /// <summary>The store holds this job's schedule: a warning about another one is given again if it comes back.</summary>
    public void OnScheduleCurrent()
    {
        lock (_lock)
        {
            _supersededGeneration = 0;
        }
    }

    /// <summary>
    /// The store holds another schedule for the job (<paramref name="schedule"/>, its <paramref name="generation"/>): the
    /// occurrence, if any, is skipped with the reason. Returns whether this generation is new here (to warn once).
    /// </summary>
    public bool OnSuperseded(RecurringOccurrence? occurrence, long generation, string schedule)
    {
        bool first;
        lock (_lock)
        {
            first = _supersededGeneration != generation;
            _supersededGeneration = generation;
        }

        if (occurrence is not null)
        {
            Update(occurrence, run => run with
            {
                Outcome = RecurringRunOutcome.Skipped,
                Error = $"not this instance's schedule any more: the store holds {schedule} (generation {generation}), changed at runtime on an instance or deployed; AddOrUpdate here or a deploy of it makes this instance run it",
            });
        }

        return first;
    }

    /// <summary>The store could not take the occurrence yet; it is offered again (the run stays enqueued-to-be, with the reason).</summary>
    public void OnEnqueueRetrying(RecurringOccurrence occurrence, string reason) =>
        Update(occurrence, run => run with { Outcome = RecurringRunOutcome.Enqueued, Error = $"not stored yet, offered again: {reason}" });

    public void OnSkipped(RecurringOccurrence occurrence, string reason) =>
        Update(occurrence, run => run with { Outcome = RecurringRunOutcome.Skipped, Error = reason });

    public void OnAttemptStarted(RecurringOccurrence occurrence)
    {
        var now = _time.GetUtcNow();
        Update(occurrence, run => run with { Outcome = RecurringRunOutcome.Running, StartedAt = now, EndedAt = null, Error = null });
    }

    public void OnAttemptEnded(RecurringOccurrence occurrence, Exception? error)
    {
        var now = _time.GetUtcNow();
        Update(occurrence, run => run with
        {
            Outcome = error is null ? RecurringRunOutcome.Succeeded : RecurringRunOutcome.Failed,
            EndedAt = now,
            Error = error is null ? null : $"{error.GetType().FullName}: {error.Message}",
        });
    }

    public RecurringJobInfo Describe()
    {
        lock (_lock)
        {
            var d = Definition;
            return new RecurringJobInfo(d.Id, d.Schedule.Text, d.Schedule.TimeZone, d.Queue, d.Handler, _paused || _pausedInStore, _next, _lastRun);
        }
    }

    public void Dispose()
    {
        lock (_lock)
        {
            _disposed = true;
            _next = null;
        }

        _timer.Dispose();

        // Offers waiting for the schedule's write go ahead (and find the job disposed); the timer stays unarmed.
        _scheduleStored.TrySetResult();
    }

    private void OnTimer()
    {
        RecurringOccurrence occurrence;
        lock (_lock)
        {
            if (_disposed || _paused || _next is not { } due)
            {
                return;
            }

            var now = _time.GetUtcNow();
            if (now < due)
            {
                // Woken early (the timer re-checks at least every minute, so a wall-clock step costs at most that).
                ArmLocked(due, now);
                return;
            }

            // Occurrences missed while this process could not fire (a long pause of the process) run once, not each.
            occurrence = new RecurringOccurrence(Definition.Id, due, IsTriggeredManually: false);
            ScheduleNextLocked(now);
        }

        Fire(this, occurrence);
    }

    private void ScheduleNextLocked(DateTimeOffset now)
    {
        if (_disposed || _paused)
        {
            return;
        }

        _next = Definition.Schedule.GetNextAfter(now);
        if (_next is { } next)
        {
            ArmLocked(next, now);
        }
    }

    private void ArmLocked(DateTimeOffset due, DateTimeOffset now)
    {
        var delay = due - now;
        _timer.Change(delay <= TimeSpan.Zero ? TimeSpan.Zero : delay < Scheduling.JobScheduler.MaxTimerDelay ? delay : Scheduling.JobScheduler.MaxTimerDelay, Timeout.InfiniteTimeSpan);
    }

    private void Update(RecurringOccurrence occurrence, Func<RecurringRun, RecurringRun> change)
    {
        lock (_lock)
        {
            // Only the latest occurrence speaks for the job: an older one that ends late does not overwrite it.
            if (ReferenceEquals(occurrence, _latest) && _lastRun is { } run)
            {
                _lastRun = change(run);
            }
        }
    }
}
