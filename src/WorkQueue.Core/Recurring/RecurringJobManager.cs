using System.Diagnostics.CodeAnalysis;
using Microsoft.Extensions.Logging;
using WorkQueue.Durability;
using WorkQueue.Internal;
using WorkQueue.Queueing;

namespace WorkQueue.Recurring;

/// <summary>
/// Runs the recurring jobs in this process: each job's timer (on the engine's clock) offers an occurrence when its time
/// comes. On an in-memory queue the occurrence is a job that is already due (never refused for room, and ahead of the
/// queued jobs), whose handler runs like any scoped handler, with the queue's retries and timeouts. On a durable queue
/// every instance offers every occurrence and the store enqueues it once (<see cref="IRecurringOccurrenceStore"/>); at
/// start, an occurrence missed while no instance ran is run once or skipped (<see cref="MissedOccurrencePolicy"/>).
/// </summary>
/// <remarks>
/// A durable job's schedule is shared through its store: each instance registers the schedule it has in code at start,
/// and a runtime <see cref="AddOrUpdate{THandler}(string, string, Action{RecurringJobOptions}?)"/> or <see cref="Remove"/>
/// is written there too (<see cref="IRecurringOccurrenceStore.SetScheduleAsync"/>). The store refuses an offer on a
/// schedule that is not the job's there, or of a removed job, and says so: the instance drops a removed job, and stops
/// running a superseded schedule (log 707) until its schedule is the job's again. Durable jobs fire on the store's clock
/// (<see cref="IRecurringOccurrenceStore.ClockOffset"/>), in-memory ones on the engine's.
/// </remarks>
internal sealed partial class RecurringJobManager : IRecurringJobs, IDisposable
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, RecurringJobState> _jobs = new(StringComparer.OrdinalIgnoreCase);
    private readonly WorkQueueProvider _provider;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private bool _started;
    private bool _stopped;

    public RecurringJobManager(WorkQueueProvider provider, RecurringJobRegistry registry, WorkQueueEnvironment environment, ILoggerFactory loggerFactory)
    {
        _provider = provider;
        _time = environment.Time;
        _logger = loggerFactory.CreateLogger("WorkQueue.Recurring");
        foreach (var definition in registry.Definitions)
        {
            AddOrReplace(definition);
        }
    }

    public IReadOnlyList<RecurringJobInfo> GetAll()
    {
        RecurringJobState[] jobs;
        lock (_lock)
        {
            jobs = [.. _jobs.Values];
        }

        return [.. jobs.Select(j => j.Describe()).OrderBy(j => j.Id, StringComparer.OrdinalIgnoreCase)];
    }

    public RecurringJobInfo? Find(string id) => Get(id)?.Describe();

    public bool Pause(string id)
    {
        var job = Get(id);
        job?.Pause();
        SetPausedInStore(job, paused: true);
        return job is not null;
    }

    public bool Resume(string id)
    {
        var job = Get(id);
        job?.Resume();
        SetPausedInStore(job, paused: false);
        return job is not null;
    }

    /// <summary>
    /// A durable job's pause is also written to its store, so every instance's offers are refused until a resume (on any
    /// instance), restarts included. Written in the background: a failure is logged, and the pause still holds here.
    /// </summary>
    private void SetPausedInStore(RecurringJobState? job, bool paused)
    {
        if (job is null || DurableStore(job.Definition) is not { } store)
        {
            return;
        }

        _ = WriteAsync();

        async Task WriteAsync()
        {
            try
            {
                await store.SetPausedAsync(job.Definition.Id, paused, CancellationToken.None).ConfigureAwait(false);
            }
            catch (Exception ex)
            {
                _logger.TryLog(static (l, s) => Log.PauseNotStored(l, s.Id, s.paused ? "pause" : "resume", s.Message), (job.Definition.Id, paused, ex.Message));
            }
        }
    }

    public async ValueTask<string?> TriggerNowAsync(string id, CancellationToken cancellationToken = default)
    {
        if (Get(id) is not { } job)
        {
            return null;
        }

        var occurrence = new RecurringOccurrence(job.Definition.Id, job.Time.GetUtcNow(), IsTriggeredManually: true);
        job.OnFiring(occurrence);
        try
        {
            return await EnqueueAsync(job, occurrence, cancellationToken).ConfigureAwait(false);
        }
        catch (JobRejectedException ex)
        {
            job.OnSkipped(occurrence, ex.Message);
            throw;
        }
    }

    public bool Remove(string id)
    {
        ArgumentNullException.ThrowIfNull(id);
        RecurringJobState? job;
        lock (_lock)
        {
            _jobs.Remove(id, out job);
        }

        job?.Dispose();
        if (job is not null && DurableStore(job.Definition) is { } store)
        {
            // Every instance learns it at its next offer (refused) or start, and drops the job; written in the
            // background, as a pause is: a failure is logged, and the job is removed here only.
            _ = WriteChangeAsync(job, store, RecurringScheduleChange.Removed);
        }

        return job is not null;
    }

    public void AddOrUpdate<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler>(string id, string cronExpression, Action<RecurringJobOptions>? configure = null)
        where THandler : class, IJobHandler<RecurringOccurrence> =>
        AddOrReplace(RecurringJobDefinition.Create<THandler>(id, zone => RecurringSchedule.Cron(cronExpression, zone, nameof(cronExpression)), configure));

    public void AddOrUpdate<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler>(string id, TimeSpan interval, Action<RecurringJobOptions>? configure = null)
        where THandler : class, IJobHandler<RecurringOccurrence> =>
        AddOrReplace(RecurringJobDefinition.Create<THandler>(id, _ => RecurringSchedule.Every(interval, nameof(interval)), configure));

    /// <summary>Arms every job's timer: called once the queues have started.</summary>
    public void Start()
    {
        RecurringJobState[] jobs;
        lock (_lock)
        {
            _started = true;
            jobs = [.. _jobs.Values];
        }

        foreach (var job in jobs)
        {
            StartJob(job);
        }
    }

    /// <summary>Stops every job's timer: called as the queues begin to stop.</summary>
    public void Stop()
    {
        RecurringJobState[] jobs;
        lock (_lock)
        {
            _stopped = true;
            jobs = [.. _jobs.Values];
        }

        foreach (var job in jobs)
        {
            job.Dispose();
        }
    }

    public void Dispose() => Stop();

    private void AddOrReplace(RecurringJobDefinition definition)
    {
        CheckQueue(definition);

        // A durable job fires on its store's clock, so the instances agree on when an occurrence is due; the store
        // measures the offset from its calls, and the clock reads it each time.
        var store = DurableStore(definition);
        var time = store is null ? _time : new RecurringStoreClock(_time, store);
        var job = new RecurringJobState(definition, time, Fire);
        RecurringJobState? replaced;
        bool start;
        lock (_lock)
        {
            if (_stopped)
            {
                job.Dispose();
                throw new InvalidOperationException("Recurring jobs are stopped: the application is shutting down.");
            }

            _jobs.Remove(definition.Id, out replaced);
            _jobs[definition.Id] = job;
            start = _started;

            // Added before the start (in code, or by the app before its host runs) it is registered as code is, at the
            // start; after it, it is a runtime change, which every instance's claim learns.
            job.Origin = start ? RecurringScheduleChange.Changed : RecurringScheduleChange.Registered;
        }

        replaced?.Dispose();
        if (start)
        {
            // A job new to this process looks for missed occurrences as a start does; a replaced one (a changed schedule)
            // does not, or the new schedule's latest occurrence before now would run at once.
            StartJob(job, catchUp: replaced is null);
        }

        Log.Registered(_logger, definition.Id, definition.Schedule.Text, definition.Schedule.TimeZone, definition.Queue, replaced is not null);
    }

    private void CheckQueue(RecurringJobDefinition definition)
    {
        string queue = definition.Queue;
        if (!_provider.TryGetControl(queue, out _))
        {
            throw new ArgumentException($"RecurringJobOptions.Queue '{queue}' of recurring job '{definition.Id}' names no registered queue. Registered queues: {string.Join(", ", _provider.Queues.Select(q => q.Name))}.", nameof(RecurringJobOptions.Queue));
        }

        var store = _provider.Find(queue).Store;
        if (store is not null && (store.Recurring is not { } occurrences || !occurrences.CarriesOccurrencesOf(definition.HandlerType)))
        {
            throw new ArgumentException(
                $"RecurringJobOptions.Queue '{queue}' of recurring job '{definition.Id}' is a durable queue, and no job type runs {definition.Handler} with RecurringOccurrence payloads: register one with AddJobType<{definition.HandlerType.Name}, RecurringOccurrence>().",
                nameof(RecurringJobOptions.Queue));
        }
    }

    private IRecurringOccurrenceStore? DurableStore(RecurringJobDefinition definition) =>
        _provider.Find(definition.Queue).Store?.Recurring;

    /// <summary>
    /// Arms the job's timer; a durable job's once the first write of its schedule to the store was tried, which also
    /// measures the store's clock, so its first due time is on that clock already.
    /// </summary>
    private void StartJob(RecurringJobState job, bool catchUp = true)
    {
        if (DurableStore(job.Definition) is not { } store)
        {
            job.OnScheduleStored();
            return;
        }

        bool runMissed = catchUp && job.Definition.MissedOccurrences == MissedOccurrencePolicy.RunOnce && !job.IsPaused;
        _ = job.Origin == RecurringScheduleChange.Registered
            ? RegisterAsync(job, store, runMissed)
            : ChangeAsync(job, store, runMissed);
    }

    /// <summary>A job added or changed at runtime: its schedule is written once (a failure is logged), then missed occurrences looked for.</summary>
    private async Task ChangeAsync(RecurringJobState job, IRecurringOccurrenceStore store, bool runMissed)
    {
        if (await WriteChangeAsync(job, store, RecurringScheduleChange.Changed).ConfigureAwait(false) && runMissed)
        {
            await CatchUpAsync(job, store, registered: true).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Writes a runtime change of the job's schedule to its store (the offers wait for the first attempt, so the claim
    /// knows the new schedule by then), tried again, less and less often, until it is stored or a newer change of the job
    /// is made here (a replace, a removal, a re-add) or the manager stops. Returns whether it was stored.
    /// </summary>
    private async Task<bool> WriteChangeAsync(RecurringJobState job, IRecurringOccurrenceStore store, RecurringScheduleChange change)
    {
        var retry = TimeSpan.FromSeconds(1);
        try
        {
            while (true)
            {
                ValueTask<RecurringScheduleRecord> write;
                lock (_lock)
                {
                    // Issued under the lock only while this is still the job's latest change here: a newer one is issued
                    // after it (on the store's one connection), so an attempt that comes late cannot undo it.
                    bool latest = change == RecurringScheduleChange.Removed
                        ? !_jobs.ContainsKey(job.Definition.Id)
                        : _jobs.TryGetValue(job.Definition.Id, out var held) && ReferenceEquals(held, job);
                    if (_stopped || !latest)
                    {
                        return false;
                    }

                    write = store.SetScheduleAsync(job.Definition.Id, change, job.Definition.Schedule.Fingerprint, CancellationToken.None);
                }

                try
                {
                    await write.ConfigureAwait(false);
                    return true;
                }
                catch (Exception ex)
                {
                    // Not stored, it holds on this instance only (for a schedule, whose offers the store refuses until
                    // then, on none): tried again, so that it lands once Redis takes writes.
                    _logger.TryLog(static (l, s) => Log.ChangeNotStored(l, s.Id, s.change == RecurringScheduleChange.Removed ? "removal" : "schedule", s.retry, s.Message), (job.Definition.Id, change, retry, ex.Message));
                }

                job.OnScheduleStored();
                await Task.Delay(retry, _time).ConfigureAwait(false);
                retry = TimeSpan.FromTicks(Math.Min(retry.Ticks * 2, TimeSpan.FromMinutes(1).Ticks));
            }
        }
        finally
        {
            job.OnScheduleStored();
        }
    }

    /// <summary>A job registered in code (or before the start): registered in the store, tried again until it is, then missed occurrences looked for.</summary>
    private Task RegisterAsync(RecurringJobState job, IRecurringOccurrenceStore store, bool runMissed) =>
        CatchUpAsync(job, store, registered: false, runMissed);

    /// <summary>
    /// Registers the job's schedule in the store unless <paramref name="registered"/> (and adopts what the store holds: a
    /// removal, or another schedule), then, if <paramref name="runMissed"/>, runs once the latest occurrence that fell
    /// after the latest one any instance enqueued and before now (every instance may do this at once: the store
    /// enqueues it once). A job never enqueued anywhere has missed nothing.
    /// </summary>
    private async Task CatchUpAsync(RecurringJobState job, IRecurringOccurrenceStore store, bool registered, bool runMissed = true)
    {
        var retry = TimeSpan.FromSeconds(1);
        while (!job.IsDisposed && !IsStopped)
        {
            try
            {
                if (!registered)
                {
                    RecurringScheduleRecord record;
                    try
                    {
                        record = await store.SetScheduleAsync(job.Definition.Id, RecurringScheduleChange.Registered, job.Definition.Schedule.Fingerprint, CancellationToken.None).ConfigureAwait(false);
                    }
                    finally
                    {
                        // The offers go ahead after the first attempt, whatever its fate (the claim checks what the store holds).
                        job.OnScheduleStored();
                    }

                    registered = true;
                    if (!Adopt(job, null, record.Change == RecurringScheduleChange.Removed, record.Generation, record.Schedule) || !runMissed)
                    {
                        return;
                    }
                }

                var last = await store.GetLastOccurrenceAsync(job.Definition.Id, CancellationToken.None).ConfigureAwait(false);
                if (last is { } after && LatestMissed(job.Definition.Schedule, after, job.Time.GetUtcNow()) is { } missed && !job.IsDisposed && !job.IsPaused)
                {
                    _logger.TryLog(static (l, s) => Log.CatchingUp(l, s.Id, s.Missed, s.Last), (job.Definition.Id, Missed: missed, Last: after));
                    await FireAsync(job, new RecurringOccurrence(job.Definition.Id, missed, IsTriggeredManually: false)).ConfigureAwait(false);
                }

                return;
            }
            catch (Exception ex) when (ex is not ObjectDisposedException)
            {
                // Redis not reachable yet: try again, less and less often, until it answers or the job goes.
                _logger.TryLog(static (l, s) => Log.CatchUpFailed(l, s.Id, s.Message), (job.Definition.Id, ex.Message));
                await Task.Delay(retry, _time).ConfigureAwait(false);
                retry = TimeSpan.FromTicks(Math.Min(retry.Ticks * 2, TimeSpan.FromMinutes(1).Ticks));
            }
        }
    }

    /// <summary>
    /// The latest occurrence after <paramref name="last"/> and at or before <paramref name="now"/>, if any. It is looked
    /// for in windows ending at <paramref name="now"/> that double in length (a minute, two, four, ...) back to
    /// <paramref name="last"/>, so an every-second job down for days walks one minute of occurrences, not every one since.
    /// </summary>
    internal static DateTimeOffset? LatestMissed(RecurringSchedule schedule, DateTimeOffset last, DateTimeOffset now)
    {
        for (var window = TimeSpan.FromMinutes(1); ; window += window)
        {
            var from = now - last <= window ? last : now - window;
            DateTimeOffset? latest = null;
            for (var at = from; schedule.GetNextAfter(at) is { } next && next <= now; at = next)
            {
                latest = next;
            }

            if (latest is not null || from == last)
            {
                return latest;
            }
        }
    }

    private bool IsStopped
    {
        get
        {
            lock (_lock)
            {
                return _stopped;
            }
        }
    }

    private RecurringJobState? Get(string id)
    {
        ArgumentNullException.ThrowIfNull(id);
        lock (_lock)
        {
            return _jobs.GetValueOrDefault(id);
        }
    }

    /// <summary>Called on the engine's timer thread when an occurrence's time has come.</summary>
    private void Fire(RecurringJobState job, RecurringOccurrence occurrence) => _ = FireAsync(job, occurrence);

    private async Task FireAsync(RecurringJobState job, RecurringOccurrence occurrence)
    {
        job.OnFiring(occurrence);
        var retry = TimeSpan.FromMilliseconds(500);
        while (true)
        {
            try
            {
                await EnqueueAsync(job, occurrence, CancellationToken.None).ConfigureAwait(false);
                return;
            }
            catch (Exception ex)
            {
                // Runs unobserved on the timer's behalf: whatever went wrong is recorded and logged, never thrown away.
                string reason = ex is JobRejectedException ? ex.Message : $"{ex.GetType().Name}: {ex.Message}";

                // A durable store that could not take it now (Redis refusing writes, unreachable, or silent) is asked
                // again until the next occurrence is due: its claim in Redis makes every offer after the first a no-op,
                // even when the first one was stored and only its answer was lost. A manual trigger claims nothing, so
                // it is not offered twice.
                bool offerAgain = ex is JobRejectedException { Reason: RejectionReason.StoreUnavailable }
                    && !occurrence.IsTriggeredManually
                    && DurableStore(job.Definition) is not null
                    && !job.IsDisposed
                    && !job.IsPaused
                    && !IsStopped
                    && !(job.Definition.Schedule.GetNextAfter(occurrence.ScheduledFor) is { } next && job.Time.GetUtcNow() + retry >= next);
                if (!offerAgain)
                {
                    job.OnSkipped(occurrence, reason);
                    _logger.TryLog(static (l, s) => Log.Skipped(l, s.Id, s.ScheduledFor, s.reason), (job.Definition.Id, occurrence.ScheduledFor, reason));
                    return;
                }

                job.OnEnqueueRetrying(occurrence, reason);
                _logger.TryLog(static (l, s) => Log.OfferingAgain(l, s.Id, s.ScheduledFor, s.retry, s.reason), (job.Definition.Id, occurrence.ScheduledFor, retry, reason));
            }

            await Task.Delay(retry, _time).ConfigureAwait(false);
            retry = TimeSpan.FromTicks(Math.Min(retry.Ticks * 2, TimeSpan.FromSeconds(30).Ticks));
        }
    }

    private async ValueTask<string?> EnqueueAsync(RecurringJobState job, RecurringOccurrence occurrence, CancellationToken cancellationToken)
    {
        if (DurableStore(job.Definition) is { } store)
        {
            if (!occurrence.IsTriggeredManually)
            {
                // The first write of the job's schedule (its registration, or a runtime change) is tried before its first
                // offer, so the claim judges the offer against it.
                await job.ScheduleStored.WaitAsync(cancellationToken).ConfigureAwait(false);
            }

            var offer = await store.EnqueueOccurrenceAsync(occurrence, job.Definition.HandlerType, job.Definition.Schedule.Fingerprint, cancellationToken).ConfigureAwait(false);
            switch (offer.Outcome)
            {
                case RecurringOfferOutcome.Enqueued:
                    job.OnEnqueued(occurrence, offer.JobId!);
                    break;
                case RecurringOfferOutcome.EnqueuedElsewhere:
                    job.OnEnqueuedElsewhere(occurrence);
                    break;
                case RecurringOfferOutcome.Removed:
                case RecurringOfferOutcome.Superseded:
                    Adopt(job, occurrence, offer.Outcome == RecurringOfferOutcome.Removed, offer.Generation, offer.Schedule ?? string.Empty);
                    break;
                default:
                    job.OnPausedInStore(occurrence);
                    break;
            }

            return offer.JobId;
        }

        // Scheduled for its own time, which has come: it goes to the threads at once, whatever the room in the queue.
        long number = _provider.Find(job.Definition.Queue).Producer.Schedule(job.Definition.Invoker, job, occurrence, occurrence.ScheduledFor);
        string id = number.ToString(System.Globalization.CultureInfo.InvariantCulture);
        job.OnEnqueued(occurrence, id);
        return id;
    }

    /// <summary>
    /// Adopts what the store holds for the job when it is not this instance's schedule: a removal drops the job here (if
    /// it was not replaced meanwhile); another schedule stops this one's occurrences (each offer is refused) until the
    /// store's schedule is this one again, with a warning once per generation. Returns whether the job runs here.
    /// </summary>
    private bool Adopt(RecurringJobState job, RecurringOccurrence? occurrence, bool removed, long generation, string schedule)
    {
        if (removed)
        {
            bool dropped;
            lock (_lock)
            {
                dropped = _jobs.TryGetValue(job.Definition.Id, out var current) && ReferenceEquals(current, job) && _jobs.Remove(job.Definition.Id);
            }

            if (occurrence is not null)
            {
                job.OnSkipped(occurrence, $"removed in the store (generation {generation}), by a runtime Remove on an instance");
            }

            job.Dispose();
            if (dropped)
            {
                _logger.TryLog(static (l, s) => Log.RemovedElsewhere(l, s.Id, s.generation), (job.Definition.Id, generation));
            }

            return false;
        }

        if (schedule == job.Definition.Schedule.Fingerprint)
        {
            job.OnScheduleCurrent();
            return true;
        }

        if (job.OnSuperseded(occurrence, generation, schedule))
        {
            _logger.TryLog(static (l, s) => Log.Superseded(l, s.Id, s.Fingerprint, s.schedule, s.generation), (job.Definition.Id, job.Definition.Schedule.Fingerprint, schedule, generation));
        }

        return false;
    }

    private static partial class Log
    {
        [LoggerMessage(700, LogLevel.Information, "Recurring job '{Id}' {Action}: '{Schedule}' ({TimeZone}) on queue '{Queue}'.", EventName = "RecurringJobRegistered")]
        private static partial void Registered(ILogger logger, string id, string action, string schedule, string timeZone, string queue);

        public static void Registered(ILogger logger, string id, string schedule, string timeZone, string queue, bool replaced) =>
            Registered(logger, id, replaced ? "replaced" : "registered", schedule, timeZone, queue);

        [LoggerMessage(702, LogLevel.Information, "Recurring job '{Id}': running the occurrence of {Missed:O}, missed while no instance ran (the latest enqueued was {Last:O}).", EventName = "RecurringOccurrenceCatchUp")]
        public static partial void CatchingUp(ILogger logger, string id, DateTimeOffset missed, DateTimeOffset last);

        [LoggerMessage(703, LogLevel.Warning, "Recurring job '{Id}': could not register its schedule in the store or read its latest occurrence there (to look for missed ones); trying again: {Reason}", EventName = "RecurringCatchUpFailed")]
        public static partial void CatchUpFailed(ILogger logger, string id, string reason);

        [LoggerMessage(705, LogLevel.Warning, "Recurring job '{Id}': the {Change} could not be stored for the other instances (it holds on this one): {Reason}", EventName = "RecurringPauseNotStored")]
        public static partial void PauseNotStored(ILogger logger, string id, string change, string reason);

        [LoggerMessage(704, LogLevel.Warning, "Recurring job '{Id}': the store could not take the occurrence for {ScheduledFor:O}; offering it again in {Delay}: {Reason}", EventName = "RecurringOccurrenceOfferedAgain")]
        public static partial void OfferingAgain(ILogger logger, string id, DateTimeOffset scheduledFor, TimeSpan delay, string reason);

        [LoggerMessage(706, LogLevel.Information, "Recurring job '{Id}' was removed at runtime on an instance (generation {Generation} in the store): it no longer runs here. Adding it again at runtime, or deploying another schedule for it, brings it back.", EventName = "RecurringJobRemovedElsewhere")]
        public static partial void RemovedElsewhere(ILogger logger, string id, long generation);

        [LoggerMessage(707, LogLevel.Warning, "Recurring job '{Id}': its schedule here, {Schedule}, is not the job's schedule any more; the store holds {Current} (generation {Generation}: changed at runtime on an instance, or deployed). This instance stops running the old schedule; change it here too (AddOrUpdate) or deploy the new schedule.", EventName = "RecurringScheduleSuperseded")]
        public static partial void Superseded(ILogger logger, string id, string schedule, string current, long generation);

        [LoggerMessage(708, LogLevel.Warning, "Recurring job '{Id}': the {Change} could not be stored for the other instances yet; trying again in {Delay}: {Reason}", EventName = "RecurringChangeNotStored")]
        public static partial void ChangeNotStored(ILogger logger, string id, string change, TimeSpan delay, string reason);

        [LoggerMessage(701, LogLevel.Warning, "Recurring job '{Id}': the occurrence for {ScheduledFor:O} was not enqueued: {Reason}", EventName = "RecurringOccurrenceSkipped")]
        public static partial void Skipped(ILogger logger, string id, DateTimeOffset scheduledFor, string reason);
    }
}
