using Microsoft.Extensions.Logging;
using WorkQueue.Internal;
using WorkQueue.Queueing;

namespace WorkQueue.Recurring;

/// <summary>
/// Runs the recurring jobs of in-memory queues in this process: each job's timer (on the engine's clock) enqueues an
/// occurrence when its time comes, as a job that is already due (so it is never refused for room, and runs ahead of the
/// queued jobs), whose handler runs like any scoped handler, with the queue's retries and timeouts.
/// </summary>
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
        return job is not null;
    }

    public bool Resume(string id)
    {
        var job = Get(id);
        job?.Resume();
        return job is not null;
    }

    public ValueTask<string?> TriggerNowAsync(string id, CancellationToken cancellationToken = default)
    {
        if (Get(id) is not { } job)
        {
            return ValueTask.FromResult<string?>(null);
        }

        var occurrence = new RecurringOccurrence(job.Definition.Id, _time.GetUtcNow(), IsTriggeredManually: true);
        job.OnFiring(occurrence);
        try
        {
            return ValueTask.FromResult<string?>(Enqueue(job, occurrence));
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
        return job is not null;
    }

    public void AddOrUpdate<THandler>(string id, string cronExpression, Action<RecurringJobOptions>? configure = null)
        where THandler : class, IJobHandler<RecurringOccurrence> =>
        AddOrReplace(RecurringJobDefinition.Create<THandler>(id, zone => RecurringSchedule.Cron(cronExpression, zone, nameof(cronExpression)), configure));

    public void AddOrUpdate<THandler>(string id, TimeSpan interval, Action<RecurringJobOptions>? configure = null)
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
            job.Start();
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
        CheckQueue(definition.Queue);
        var job = new RecurringJobState(definition, _time, Fire);
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
        }

        replaced?.Dispose();
        if (start)
        {
            job.Start();
        }

        Log.Registered(_logger, definition.Id, definition.Schedule.Text, definition.Schedule.TimeZone, definition.Queue, replaced is not null);
    }

    private void CheckQueue(string queue)
    {
        if (!_provider.TryGetControl(queue, out _))
        {
            throw new ArgumentException($"RecurringJobOptions.Queue '{queue}' names no registered queue. Registered queues: {string.Join(", ", _provider.Queues.Select(q => q.Name))}.", nameof(RecurringJobOptions.Queue));
        }

        if (_provider.Find(queue).Store is not null)
        {
            throw new ArgumentException($"RecurringJobOptions.Queue '{queue}' is a durable queue; recurring jobs run on in-memory queues.", nameof(RecurringJobOptions.Queue));
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

    private void Fire(RecurringJobState job, RecurringOccurrence occurrence)
    {
        job.OnFiring(occurrence);
        try
        {
            Enqueue(job, occurrence);
        }
        catch (JobRejectedException ex)
        {
            job.OnSkipped(occurrence, ex.Message);
            _logger.TryLog(static (l, s) => Log.Skipped(l, s.Id, s.ScheduledFor, s.Message), (job.Definition.Id, occurrence.ScheduledFor, ex.Message));
        }
    }

    private string Enqueue(RecurringJobState job, RecurringOccurrence occurrence)
    {
        // Scheduled for its own time, which has come: it goes to the threads at once, whatever the room in the queue.
        long number = _provider.Find(job.Definition.Queue).Producer.Schedule(job.Definition.Invoker, job, occurrence, occurrence.ScheduledFor);
        string id = number.ToString(System.Globalization.CultureInfo.InvariantCulture);
        job.OnEnqueued(occurrence, id);
        return id;
    }

    private static partial class Log
    {
        [LoggerMessage(700, LogLevel.Information, "Recurring job '{Id}' {Action}: '{Schedule}' ({TimeZone}) on queue '{Queue}'.", EventName = "RecurringJobRegistered")]
        private static partial void Registered(ILogger logger, string id, string action, string schedule, string timeZone, string queue);

        public static void Registered(ILogger logger, string id, string schedule, string timeZone, string queue, bool replaced) =>
            Registered(logger, id, replaced ? "replaced" : "registered", schedule, timeZone, queue);

        [LoggerMessage(701, LogLevel.Warning, "Recurring job '{Id}': the occurrence for {ScheduledFor:O} was not enqueued: {Reason}", EventName = "RecurringOccurrenceSkipped")]
        public static partial void Skipped(ILogger logger, string id, DateTimeOffset scheduledFor, string reason);
    }
}
