using System.Globalization;
using Microsoft.Extensions.Logging;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.Internal;
using WorkQueue.Telemetry;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The reading of a durable queue's jobs in Redis, for its producer (<see cref="DurableWorkQueue"/>) and the admin
/// endpoints: a job's status (where it is now, its record, see <see cref="DurableScripts"/>), a cancel by id, which
/// removes a job that waits and asks the instance that holds a delivered one to fire its token (over the cancel
/// channel), the scheduled jobs, the job search and the dead letters. Called on request threads with async Redis calls;
/// of the queue's consumer loop it sees only what <see cref="ILocalConsumer"/> gives (the entries held here, and that a
/// cancel ended a job), and the loop's own thread only receives the cancel messages.
/// </summary>
/// <remarks>
/// This file holds status, cancel and the scheduled jobs; <c>.Search.cs</c> the job search; <c>.DeadLetters.cs</c> the
/// dead-letter stream.
/// </remarks>
internal sealed partial class RedisJobBrowser
{
    /// <summary>The most delayed-set members one listing reads, so a listing stays one short call whatever the backlog of retries.</summary>
    private const int ListScanLimit = 10_000;

    private readonly string _queue;
    private readonly RedisStreamKeys _keys;
    private readonly QueueJobTypes _types;
    private readonly WorkQueueOptions _options;
    private readonly Func<IDatabase> _database;
    private readonly ILocalConsumer _consumer;
    private readonly WorkQueueMetrics? _metrics;
    private readonly ILogger _logger;

    /// <summary>Creates the reading of one durable queue's jobs.</summary>
    /// <param name="queue">The queue's name.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="types">The job types the queue carries (names in statuses, dead letters and scheduled jobs; the search's default type).</param>
    /// <param name="options">The queue's options: its capacity (a requeue's room) and how long ended jobs' records are kept.</param>
    /// <param name="database">Gets the database, at each call.</param>
    /// <param name="consumer">This process's consumer of the queue.</param>
    /// <param name="metrics">The metrics a job cancelled here is counted in, if any.</param>
    /// <param name="logger">The logger.</param>
    public RedisJobBrowser(
        string queue,
        RedisStreamKeys keys,
        QueueJobTypes types,
        WorkQueueOptions options,
        Func<IDatabase> database,
        ILocalConsumer consumer,
        WorkQueueMetrics? metrics,
        ILogger logger)
    {
        _queue = queue;
        _keys = keys;
        _types = types;
        _options = options;
        _database = database;
        _consumer = consumer;
        _metrics = metrics;
        _logger = logger;
    }

    private IDatabase Database => _database();

    /// <summary>Gets how long an ended job's record is kept in Redis (zero: none), as the consumer's settling keeps it.</summary>
    private long FinishedRetentionMs => JobRecord.RetentionMs(_options);

    /// <summary>
    /// Reads a job's status from Redis, or <see langword="null"/> when Redis knows no such job (or its record expired).
    /// <paramref name="jobId"/> may also be the stream id of a later entry of the job (a retry's, a hand-back's) while
    /// that entry is in the stream: the status is the job's, under its own id.
    /// </summary>
    public async Task<JobStatus?> GetJobAsync(string jobId) =>
        ToStatus(await StatusCall.RunAsync(Database, _keys, jobId).ConfigureAwait(false));

    /// <summary>
    /// Cancels a job by id (see <see cref="DurableScripts.Cancel"/>), or by the stream id of a later entry of it (a
    /// retry's, a hand-back's) while that entry is in the stream; with <paramref name="scheduledOnly"/>, only a
    /// scheduled job that has not come due. A job cancelled here is counted in this process's metrics.
    /// </summary>
    public async Task<JobCancelResult> CancelAsync(string jobId, bool scheduledOnly = false)
    {
        var reply = await CancelCall.RunAsync(Database, _keys, jobId, FinishedRetentionMs, scheduledOnly).ConfigureAwait(false);
        var outcome = reply.Outcome;
        if (outcome == JobCancelOutcome.Canceled)
        {
            _consumer.EndedOutsideRound();
            _metrics?.Canceled(new KeyValuePair<string, object?>(WorkQueueMetrics.QueueTag, _queue));
        }

        if (outcome == JobCancelOutcome.NotFound || scheduledOnly)
        {
            return new JobCancelResult(outcome, null);
        }

        // The job's own id, which the script answers: the id given may be a later entry's, gone after a cancel.
        string job = reply.JobId ?? jobId;
        _logger.TryLog(static (l, s) => Log.CancelAsked(l, s._queue, s.job, s.outcome), (_queue, job, outcome));
        return new JobCancelResult(outcome, await GetJobAsync(job).ConfigureAwait(false));
    }

    /// <summary>Cancels a scheduled job that has not come due (and frees its idempotency key).</summary>
    public async Task<bool> CancelScheduledAsync(string jobId) =>
        (await CancelAsync(jobId, scheduledOnly: true).ConfigureAwait(false)).Outcome == JobCancelOutcome.Canceled;

    /// <summary>Lists up to <paramref name="count"/> scheduled jobs that have not come due, soonest first.</summary>
    public async Task<IReadOnlyList<DurableScheduledJob>> ListScheduledAsync(int count)
    {
        var rows = await ListScheduledCall.RunAsync(Database, _keys, count, ListScanLimit).ConfigureAwait(false);
        var jobs = new List<DurableScheduledJob>(rows.Length);
        foreach (var row in rows)
        {
            string name = _types.NameOrDefault(JobTypeEnvelope.Read(row.Payload, out var json));
            jobs.Add(new DurableScheduledJob(row.JobId, name, DateTimeOffset.FromUnixTimeMilliseconds(row.DueMs), DateTimeOffset.FromUnixTimeMilliseconds(row.ScheduledAtMs), json.ToString()));
        }

        return jobs;
    }

    private JobStatus? ToStatus(in StatusReply reply)
    {
        if (reply.Kind == StatusKind.Unknown)
        {
            return null;
        }

        string jobId = reply.JobId!;
        string name = _types.NameOrDefault(reply.JobType);
        var record = reply.Record;
        var attempts = new List<JobAttempt>(record.History);
        switch (reply.Kind)
        {
            case StatusKind.Ended:
            {
                var state = record.State switch
                {
                    'S' => JobState.Succeeded,
                    'D' => JobState.DeadLettered,
                    _ => JobState.Canceled,
                };
                if (record.Consumer is not null || state != JobState.Canceled)
                {
                    attempts.Add(new JobAttempt(record.Attempt, record.Consumer, record.StartedAt, record.At, state, record.Error));
                }

                return new JobStatus(jobId, _queue, name, state, record.Attempt, record.EnqueuedAt, record.At, null, record.StartedAt, record.Consumer, LastErrorOf(record, attempts), record.CancelRequested) { Attempts = attempts };
            }

            case StatusKind.Scheduled:
            case StatusKind.Retrying:
            {
                var runAt = reply.Due;
                int attempt = reply.Attempt;
                var enqueuedAt = reply.EnqueuedAt;
                var state = reply.Kind == StatusKind.Scheduled ? JobState.Scheduled : JobState.Retrying;
                var since = state == JobState.Scheduled ? enqueuedAt : attempts.LastOrDefault()?.EndedAt;
                return new JobStatus(jobId, _queue, name, state, attempt, enqueuedAt, since, runAt, attempts.LastOrDefault()?.StartedAt, attempts.LastOrDefault()?.WorkerName, LastErrorOf(record, attempts), record.CancelRequested) { Attempts = attempts };
            }

            default:
            {
                var entry = reply.Entry!;
                string streamId = entry.StreamId;
                var enqueuedAt = DateTimeOffset.FromUnixTimeMilliseconds(entry.EnqueuedAtMs);
                var queuedSince = DateTimeOffset.FromUnixTimeMilliseconds(long.TryParse(streamId.AsSpan(0, streamId.IndexOf('-')), NumberStyles.None, CultureInfo.InvariantCulture, out long added) ? added : entry.EnqueuedAtMs);
                if (reply.Kind == StatusKind.Queued)
                {
                    return new JobStatus(jobId, _queue, name, JobState.Queued, entry.Attempt, enqueuedAt, queuedSince, null, attempts.LastOrDefault()?.StartedAt, attempts.LastOrDefault()?.WorkerName, LastErrorOf(record, attempts), record.CancelRequested) { Attempts = attempts };
                }

                string consumer = reply.Consumer!;

                // Redis knows when the consumer last claimed it, not when it started: only the process that runs it knows.
                DateTimeOffset? startedAt = null;
                bool cancelRequested = record.CancelRequested;
                if (consumer == _consumer.ConsumerName && _consumer.TryGetHeld(streamId, out var held) && held.StartedAtMs > 0)
                {
                    startedAt = DateTimeOffset.FromUnixTimeMilliseconds(held.StartedAtMs);
                    cancelRequested |= held.CancelRequested;
                }

                attempts.Add(new JobAttempt(entry.Attempt, consumer, startedAt, null, JobState.Running, null));
                return new JobStatus(jobId, _queue, name, JobState.Running, entry.Attempt, enqueuedAt, startedAt, null, startedAt, consumer, LastErrorOf(record, attempts), cancelRequested) { Attempts = attempts };
            }
        }
    }

    private static string? LastErrorOf(JobRecord record, List<JobAttempt> attempts) =>
        record.Error ?? attempts.LastOrDefault(static a => a.Error is not null)?.Error;

    private static partial class Log
    {
        [LoggerMessage(515, LogLevel.Information, "Durable queue '{Queue}': cancel of job {JobId}: {Outcome}.", EventName = "DurableJobCancel")]
        public static partial void CancelAsked(ILogger logger, string queue, string jobId, JobCancelOutcome outcome);
    }
}
