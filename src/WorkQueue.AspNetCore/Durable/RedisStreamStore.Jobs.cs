using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.Internal;
using WorkQueue.Telemetry;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// Jobs by id: a job's status read from Redis (where it is now, its record, see <see cref="DurableScripts"/>), and a
/// cancel by id, which removes a job that waits and asks the instance that holds a delivered one to fire its token
/// (over the cancel channel). Called on request threads with async Redis calls; the queue's own thread only receives
/// the cancel messages.
/// </summary>
internal sealed partial class RedisStreamStore
{
    /// <summary>
    /// How often the round trims the ended-job lists and their records (their retention and count cap): a few commands
    /// per list, plus one HDEL per 512 records dropped; records are never expired by Redis one by one.
    /// </summary>
    private static readonly TimeSpan TrimInterval = TimeSpan.FromMilliseconds(100);

    private long _nextTrim;

    /// <summary>
    /// When a round that acknowledges nothing next trims, if nothing ended here meanwhile: when the oldest listed record
    /// passes the retention (the last trim's answer), at the latest a heartbeat interval after the last trim.
    /// </summary>
    private long _nextIdleTrim;

    /// <summary>Whether this instance ended a job outside the round (a dead letter, a cancel) since the last trim: the count cap may be passed.</summary>
    private volatile bool _endedSinceTrim;

    /// <summary>Gets how long an ended job's record is kept in Redis (zero: none), from the queue's FinishedJobRetention and MaxFinishedJobs.</summary>
    internal long FinishedRetentionMs => _options.MaxFinishedJobs == 0 ? 0 : (long)_options.FinishedJobRetention.TotalMilliseconds;

    /// <summary>
    /// Reads a job's status from Redis, or <see langword="null"/> when Redis knows no such job (or its record expired).
    /// <paramref name="jobId"/> may also be the stream id of a later entry of the job (a retry's, a hand-back's) while
    /// that entry is in the stream: the status is the job's, under its own id.
    /// </summary>
    public async Task<JobStatus?> GetJobAsync(string jobId) =>
        ToStatus(await StatusCall.RunAsync(Database, Keys, jobId).ConfigureAwait(false));

    /// <summary>
    /// Cancels a job by id (see <see cref="DurableScripts.Cancel"/>), or by the stream id of a later entry of it (a
    /// retry's, a hand-back's) while that entry is in the stream; with <paramref name="scheduledOnly"/>, only a
    /// scheduled job that has not come due. A job cancelled here is counted in this process's metrics.
    /// </summary>
    public async Task<JobCancelResult> CancelAsync(string jobId, bool scheduledOnly = false)
    {
        var reply = await CancelCall.RunAsync(Database, Keys, jobId, FinishedRetentionMs, scheduledOnly).ConfigureAwait(false);
        var outcome = reply.Outcome;
        if (outcome == JobCancelOutcome.Canceled)
        {
            _endedSinceTrim = true;
            if (_services.GetService<WorkQueueMetrics>() is { } metrics)
            {
                metrics.Canceled(new KeyValuePair<string, object?>(WorkQueueMetrics.QueueTag, _queue));
            }
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

    /// <summary>A cancel by id reached this process (the store's subscription): fires the token of the entry held here, or drops it unstarted.</summary>
    private void OnCancelMessage(string? streamId)
    {
        if (streamId is null || !_held.TryGetValue(streamId, out var entry))
        {
            // Not held here: another instance holds it, or it was settled meanwhile (its outcome is on its way).
            return;
        }

        if (entry.RequestCancel())
        {
            // Not started: it will not run here (TryStart refuses it), and is settled as cancelled now.
            _outcomes.Enqueue(new Outcome(OutcomeKind.Cancel, entry, 0, null, null));
            Signal();
        }
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
                if (consumer == ConsumerName && _held.TryGetValue(streamId, out var held) && held.StartedAtMs > 0)
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
}
