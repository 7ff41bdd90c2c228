using System.Globalization;
using System.Text.Json;
using WorkQueue.AspNetCore.Dashboard;
using WorkQueue.AspNetCore.Durable;

namespace WorkQueue.AspNetCore.Admin;

/// <summary>The JSON bodies of the admin endpoints (serialized camelCase).</summary>
internal static class AdminResponses
{
    public static QueueState FromSnapshot(WorkQueueSnapshot s, DurableQueue? durable = null) => new(
        s.Name,
        s.Depth,
        s.Capacity,
        ToJson(s.FullMode),
        WorkersFrom(s),
        new JobsState(s.RunningJobs, s.MaxConcurrency, s.WaitingContinuations),
        s.IsPaused,
        s.IsAccepting,
        s.Totals,
        Latency.From(s.QueueWait),
        Latency.From(s.RunTime),
        [.. s.StuckJobs.Select(j => new StuckJobState(j.Id, j.Name, j.Attempt, j.RunningFor.TotalMilliseconds, j.Reason))],
        s.Durable is { } d ? FromDurable(d, durable?.Store.Keys.Stream.ToString() ?? string.Empty) : null,
        s.Scheduled);

    public static ScheduledJobState FromScheduled(ScheduledJob j) => new(j.Job.Id.ToString(CultureInfo.InvariantCulture), j.Job.Name, j.DueAt, j.ScheduledAt);

    public static RecurringJobState FromRecurring(RecurringJobInfo r) => new(
        r.Id,
        r.Schedule,
        r.TimeZone,
        r.Queue,
        r.Handler,
        r.IsPaused,
        r.NextRunAt,
        r.LastRun is { } run
            ? new RecurringRunState(run.ScheduledFor, run.JobId, run.Outcome.ToString().ToLowerInvariant(), run.StartedAt, run.EndedAt, run.Error)
            : null);

    /// <summary>A durable queue's cluster-wide figures (from Redis), next to this process's own counters in the rest of the state.</summary>
    public static DurableState FromDurable(DurableQueueSnapshot d, string stream) => new(
        d.ConsumerName,
        stream,
        d.IsConnected,
        d.LastError,
        d.HeldHere,
        d.StreamLength,
        d.Pending,
        d.Lag,
        d.DelayedRetries,
        d.DeadLetters,
        [.. d.Consumers.Select(c => new DurableConsumerState(c.Name, c.Pending, c.Idle.TotalMilliseconds, c.IsThisProcess))],
        d.ReadAt,
        d.Scheduled);

    public static DurableDeadLetterState FromDurableDeadLetter(DurableDeadLetter d) => new(
        d.Id,
        d.JobId,
        d.Name,
        d.Attempt,
        new ErrorState(d.ErrorType ?? string.Empty, d.ErrorMessage),
        d.Reason,
        d.DeadLetteredAt,
        d.EnqueuedAt);

    public static WorkersState WorkersFrom(WorkQueueSnapshot s) =>
        new(s.Name, s.Workers, s.BusyWorkers, s.TargetWorkers, s.MinWorkers, s.MaxWorkers, ToJson(s.Mode));

    public static DeadLetterState FromDeadLetter(DeadLetteredJob d) => new(
        d.Job.Id,
        d.Job.Name,
        d.Job.Attempt,
        new ErrorState(d.Exception.GetType().FullName ?? d.Exception.GetType().Name, d.Exception.Message),
        d.DeadLetteredAt);

    public static HistorySample FromSample(QueueSample sample)
    {
        var s = sample.Snapshot;
        return new(
            sample.At.ToUnixTimeMilliseconds(),
            s.Depth,
            s.Capacity,
            s.Workers,
            s.BusyWorkers,
            s.Totals.Unfinished,
            s.RunningJobs,
            Math.Round(sample.JobsPerSecond, 2),
            s.QueueWait.P50.TotalMilliseconds,
            s.QueueWait.P99.TotalMilliseconds);
    }

    public static JobStatusState FromJob(JobStatus j, AdminEndpointMetadata? settings = null) => new(
        j.Id,
        j.QueueName,
        j.Name,
        ToJson(j.State),
        j.Attempt,
        j.EnqueuedAt,
        j.StateSince,
        j.RunAt,
        j.StartedAt,
        j.WorkerName,
        j.LastError,
        j.CancelRequested,
        j.CancelIgnored,
        settings is { ShowPayloads: true } ? WritePayload(j.Payload, settings.MaxPayloadLength, settings.PayloadJson) : null,
        settings is { ShowPayloads: true });

    /// <summary>
    /// Writes a payload as JSON with <paramref name="json"/> (the app's HTTP JSON options), cut to
    /// <paramref name="maxLength"/> characters; a payload those options cannot write shows its <c>ToString()</c> (or, if
    /// that throws too, says so), so one odd type never fails the page.
    /// </summary>
    /// <remarks>
    /// Without reflection (a trimmed or native AOT app) the options know only the types of the resolvers the app gave
    /// them (<c>ConfigureHttpJsonOptions</c>); a payload of any other type shows its <c>ToString()</c>.
    /// </remarks>
    public static string? WritePayload(object? payload, int maxLength, JsonSerializerOptions? json)
    {
        if (payload is null)
        {
            return null;
        }

        // The payload's getters and ToString are the app's code: whatever they throw costs this payload, not the page.
        string text;
        try
        {
            text = json is not null && json.TryGetTypeInfo(payload.GetType(), out var typeInfo)
                ? JsonSerializer.Serialize(payload, typeInfo)
                : payload.ToString() ?? string.Empty;
        }
        catch (Exception)
        {
            try
            {
                text = payload.ToString() ?? string.Empty;
            }
            catch (Exception ex)
            {
                text = $"(the payload of type {payload.GetType().FullName} could not be written: {ex.GetType().Name})";
            }
        }

        return text.Length <= maxLength ? text : string.Concat(text.AsSpan(0, maxLength), "…");
    }

    public static DurableJobStatusState FromJob(JobStatus j, string job) => new(
        j.Id,
        j.QueueName,
        job,
        ToJson(j.State),
        j.Attempt,
        j.EnqueuedAt,
        j.StateSince,
        j.RunAt,
        j.StartedAt,
        j.WorkerName,
        j.LastError,
        j.CancelRequested,
        j.CancelIgnored,
        [.. j.Attempts.Select(a => new DurableJobAttemptState(a.Number, a.WorkerName, a.StartedAt, a.EndedAt, ToJson(a.Outcome), a.Error))]);

    public static string ToJson(JobCancelOutcome outcome) => outcome switch
    {
        JobCancelOutcome.Canceled => "canceled",
        JobCancelOutcome.CancelRequested => "cancelRequested",
        JobCancelOutcome.AlreadyFinished => "alreadyFinished",
        _ => "notFound",
    };

    public static string ToJson(JobState state) => state switch
    {
        JobState.Queued => "queued",
        JobState.Scheduled => "scheduled",
        JobState.Running => "running",
        JobState.Retrying => "retrying",
        JobState.Succeeded => "succeeded",
        JobState.DeadLettered => "deadLettered",
        JobState.Canceled => "canceled",
        JobState.Dropped => "dropped",
        _ => "abandoned",
    };

    /// <summary>Reads a state as <see cref="ToJson(JobState)"/> writes it (ignoring case), or <see langword="null"/>.</summary>
    public static JobState? ParseJobState(string text)
    {
        foreach (var state in Enum.GetValues<JobState>())
        {
            if (string.Equals(ToJson(state), text, StringComparison.OrdinalIgnoreCase))
            {
                return state;
            }
        }

        return null;
    }

    public static string ToJson(WorkerMode mode) => mode == WorkerMode.Manual ? "manual" : "auto";

    private static string ToJson(QueueFullMode mode) => mode switch
    {
        QueueFullMode.Reject => "reject",
        QueueFullMode.DropOldest => "dropOldest",
        _ => "wait",
    };
}

internal sealed record QueueState(
    string Name,
    int Depth,
    int Capacity,
    string FullMode,
    WorkersState Workers,
    JobsState Jobs,
    bool Paused,
    bool Accepting,
    WorkQueueTotals Totals,
    Latency QueueWaitMs,
    Latency RunTimeMs,
    StuckJobState[] StuckJobs,
    DurableState? Durable,
    int Scheduled);

/// <summary>
/// A durable queue: this process's consumer and the jobs it holds (fetched, not yet settled), and the cluster-wide
/// figures last read from Redis (null until first read): unfinished entries, pending, lag, delayed retries, dead
/// letters and every consumer.
/// </summary>
internal sealed record DurableState(
    string Consumer,
    string Stream,
    bool Connected,
    string? LastError,
    int HeldHere,
    long? StreamLength,
    long? Pending,
    long? Lag,
    long? DelayedRetries,
    long? DeadLetters,
    DurableConsumerState[] Consumers,
    DateTimeOffset? ReadAt,
    long? Scheduled);

internal sealed record DurableConsumerState(string Name, long Pending, double IdleMs, bool ThisProcess);

/// <summary>A durable queue's dead letter, without its payload; <c>Id</c> is its id in the dead-letter stream (for requeue and delete).</summary>
internal sealed record DurableDeadLetterState(
    string Id,
    string JobId,
    string Name,
    int Attempt,
    ErrorState Error,
    string Reason,
    DateTimeOffset DeadLetteredAt,
    DateTimeOffset EnqueuedAt);

internal sealed record RequeuedState(string Queue, string DeadLetterId, string NewId);

/// <summary>
/// One dead letter of a bulk call: <c>requeued</c> (with the new job's id), <c>deleted</c>, <c>not-found</c>, or
/// <c>queue-full</c> (a requeue the queue had no room for under its capacity: it stays a dead letter).
/// </summary>
internal sealed record DeadLetterBatchItem(string DeadLetterId, string Outcome, string? NewId);

/// <summary>What a bulk dead-letter call did: how many were acted on, not found, or refused for lack of room (a requeue), and each one's outcome.</summary>
internal sealed record DeadLetterBatchState(string Queue, string Action, int Done, int NotFound, int QueueFull, DeadLetterBatchItem[] Results);

/// <summary>Jobs running now (async jobs that await hold no thread), the concurrency limit, and continuations waiting for a thread.</summary>
internal sealed record JobsState(int Running, int MaxConcurrency, int WaitingContinuations);

internal sealed record StuckJobState(string Id, string Job, int Attempt, double RunningForMs, string Reason);

/// <summary>The queue's threads: alive, executing job code (busy), the target and the limits, and who sets the count.</summary>
internal sealed record WorkersState(string Queue, int Current, int Busy, int Target, int Min, int Max, string Mode);

internal sealed record DepthState(string Queue, int Depth, int Capacity);

internal sealed record PauseState(string Queue, bool Paused);

internal sealed record Latency(int Samples, double P50, double P95, double P99, double Max)
{
    public static Latency From(LatencySummary s) =>
        new(s.Samples, s.P50.TotalMilliseconds, s.P95.TotalMilliseconds, s.P99.TotalMilliseconds, s.Max.TotalMilliseconds);
}

/// <summary>A dead-lettered job without its payload (payloads may hold personal data).</summary>
internal sealed record DeadLetterState(string Id, string Name, int Attempt, ErrorState Error, DateTimeOffset DeadLetteredAt);

internal sealed record ErrorState(string Type, string Message);

internal sealed record HistoryState(int IntervalMs, HistoryQueue[] Queues);

internal sealed record HistoryQueue(string Name, HistorySample[] Samples);

/// <summary>One sampling tick of one queue; <c>T</c> is in Unix milliseconds, latencies in milliseconds.</summary>
internal sealed record HistorySample(
    long T,
    int Depth,
    int Capacity,
    int Workers,
    int Busy,
    long Unfinished,
    int Running,
    double JobsPerSecond,
    double QueueWaitP50Ms,
    double QueueWaitP99Ms);

/// <summary>A job of an in-memory queue by id (<c>GET {prefix}/{queue}/jobs/{id}</c>).</summary>
internal sealed record JobStatusState(
    string Id,
    string Queue,
    string Job,
    string State,
    int Attempt,
    DateTimeOffset EnqueuedAt,
    DateTimeOffset? StateSince,
    DateTimeOffset? RunAt,
    DateTimeOffset? StartedAt,
    string? Worker,
    string? LastError,
    bool CancelRequested,
    bool CancelIgnored,
    string? Payload,
    bool PayloadsShown);

/// <summary>One page of a job search (<c>GET {prefix}/{queue}/jobs</c>).</summary>
internal sealed record JobPageState(JobStatusState[] Jobs, string? Next, int Scanned, bool PayloadsShown);

/// <summary>What a cancel by id did (<c>DELETE {prefix}/{queue}/jobs/{id}</c>).</summary>
internal sealed record JobCancelState(string Outcome, JobStatusState Job);

/// <summary>
/// A job of a durable queue by id (<c>GET {prefix}/{queue}/jobs/{id}</c>): the fields of <see cref="JobStatusState"/>
/// (the id a string, as durable ids are; <c>worker</c> the consumer), plus its attempts.
/// </summary>
internal sealed record DurableJobStatusState(
    string Id,
    string Queue,
    string Job,
    string State,
    int Attempt,
    DateTimeOffset EnqueuedAt,
    DateTimeOffset? StateSince,
    DateTimeOffset? RunAt,
    DateTimeOffset? StartedAt,
    string? Worker,
    string? LastError,
    bool CancelRequested,
    bool CancelIgnored,
    DurableJobAttemptState[] Attempts);

internal sealed record DurableJobAttemptState(int Number, string? Consumer, DateTimeOffset? StartedAt, DateTimeOffset? EndedAt, string Outcome, string? Error);

/// <summary>One page of a durable queue's job search (<c>GET {prefix}/{queue}/jobs</c>): the shape of <see cref="JobPageState"/>, ids as strings, each job with its attempts.</summary>
internal sealed record DurableJobPageState(DurableJobStatusState[] Jobs, string? Next, int Scanned, bool PayloadsShown);

/// <summary>What a cancel by id of a durable job did (<c>DELETE {prefix}/{queue}/jobs/{id}</c>).</summary>
internal sealed record DurableJobCancelState(string Outcome, DurableJobStatusState Job);

/// <summary>A job waiting for its time. The id is a string, as durable ids are.</summary>
internal sealed record ScheduledJobState(string Id, string Job, DateTimeOffset DueAt, DateTimeOffset ScheduledAt);

internal sealed record RecurringJobState(
    string Id,
    string Schedule,
    string TimeZone,
    string Queue,
    string Handler,
    bool Paused,
    DateTimeOffset? NextRunAt,
    RecurringRunState? LastRun);

internal sealed record RecurringRunState(DateTimeOffset ScheduledFor, string? JobId, string Outcome, DateTimeOffset? StartedAt, DateTimeOffset? EndedAt, string? Error);

internal sealed record TriggeredState(string RecurringJobId, string JobId);

/// <summary>The thread-pool starvation alarm: how long work items wait for a CLR thread-pool thread.</summary>
internal sealed record ThreadPoolState(double LagMs, double MaxLagMs, bool Starving, DateTimeOffset? StarvingSince, int Threads, long PendingWorkItems, bool Enabled);
