using Microsoft.Extensions.Logging;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.Internal;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// Writes a durable queue's outcomes back to Redis, on the store's thread: the retries, dead letters, cancels, unknown
/// job types and hand-backs queued in the <see cref="OutcomeQueue"/> (<see cref="SendOutcomes"/>), each through its
/// script, which acts only while this consumer still owns the entry (one a survivor has reclaimed is settled there);
/// and what a round did with its acknowledgements (<see cref="FinishCompleted"/>; the round itself, which carries them,
/// is the store's). A settled entry is forgotten (<see cref="HeldEntries"/>); one Redis did not take is put back.
/// </summary>
/// <remarks>
/// It knows nothing of the store: what it needs comes in through its constructor, and the two things it tells the
/// store's loop go out through two callbacks, called on the store's thread as they happen, so they hold even when a
/// later outcome of the same pass fails: that it ended a job (a dead letter, a cancel, a hand-back that ended a
/// cancelled job; the next round trims, as the count cap of ended jobs may be passed), and that it stored a retry due
/// in so many ms (the next poll comes no later: this consumer learns due times from its fetches). Callbacks rather than
/// a returned value, because a pass that fails half-way throws past any value and the retries stored before the failure
/// still count; rather than the loop's state objects, because the trims' schedule (<see cref="TrimSchedule"/>) and the
/// poll time are the loop's and are read nowhere here.
/// </remarks>
internal sealed partial class OutcomeSettler
{
    private readonly string _queue;
    private readonly RedisStreamKeys _keys;
    private readonly string _consumer;
    private readonly WorkQueueOptions _options;
    private readonly DurableQueueOptions _durable;
    private readonly HeldEntries _held;
    private readonly OutcomeQueue _outcomes;
    private readonly Func<long> _redisNowMs;
    private readonly Action _ended;
    private readonly Action<long> _retryStored;
    private readonly ILogger _logger;

    /// <summary>Creates the settler of one queue's consumer.</summary>
    /// <param name="queue">The queue's name (for the log).</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="consumer">This consumer's name in the queue's group.</param>
    /// <param name="options">The queue's options (how long ended jobs' records are kept).</param>
    /// <param name="durable">The queue's durable options (the unknown job types' timeout, the poll interval).</param>
    /// <param name="held">The entries this consumer holds: settled ones are forgotten.</param>
    /// <param name="outcomes">The outcomes to send; what Redis did not take goes back there.</param>
    /// <param name="redisNowMs">Redis's time as this process measures it, in Unix ms.</param>
    /// <param name="ended">Told that a job ended here outside the round (the next round trims).</param>
    /// <param name="retryStored">Told that a retry was stored, due in the given ms (the next poll comes no later).</param>
    /// <param name="logger">The store's logger.</param>
    public OutcomeSettler(
        string queue,
        RedisStreamKeys keys,
        string consumer,
        WorkQueueOptions options,
        DurableQueueOptions durable,
        HeldEntries held,
        OutcomeQueue outcomes,
        Func<long> redisNowMs,
        Action ended,
        Action<long> retryStored,
        ILogger logger)
    {
        _queue = queue;
        _keys = keys;
        _consumer = consumer;
        _options = options;
        _durable = durable;
        _held = held;
        _outcomes = outcomes;
        _redisNowMs = redisNowMs;
        _ended = ended;
        _retryStored = retryStored;
        _logger = logger;
    }

    /// <summary>Gets how long an ended job's record is kept in Redis (zero: none), from the queue's FinishedJobRetention and MaxFinishedJobs.</summary>
    private long FinishedRetentionMs => JobRecord.RetentionMs(_options);

    /// <summary>
    /// Sends queued retries, dead letters and hand-backs (completions travel with the turn's round, which <see cref="FinishCompleted"/> settles);
    /// returns whether it sent anything (there may be more). An outcome Redis refuses goes to the back of the queue and
    /// ends the pass, so it is tried again after the backoff without holding up the others.
    /// </summary>
    public bool SendOutcomes(IDatabase db)
    {
        bool sent = false;
        var releases = new List<Outcome>();
        try
        {
            int budget = RedisStreamStore.BatchSize;
            while (budget-- > 0 && _outcomes.TryTake(out var outcome))
            {
                if (outcome.Kind == OutcomeKind.Release)
                {
                    releases.Add(outcome);
                    continue;
                }

                try
                {
                    Send(db, outcome);
                }
                catch (Exception ex) when (ex is RedisException or TimeoutException)
                {
                    _outcomes.PutBack(outcome);
                    throw;
                }

                _held.Forget(outcome.Entry);
                sent = true;
            }
        }
        finally
        {
            if (releases.Count > 0)
            {
                sent |= SendReleases(db, releases);
            }
        }

        return sent;
    }

    /// <summary>
    /// Sends a retry or a dead letter. An entry the heartbeat found lost by Redis is stored again without asking Redis
    /// again (<see cref="DurableEntry.Vanished"/>); a script that stores nothing (another consumer owns the entry now) is
    /// logged, never silently dropped.
    /// </summary>
    private void Send(IDatabase db, Outcome outcome)
    {
        var entry = outcome.Entry;
        bool stored;
        if (outcome.Kind == OutcomeKind.Retry)
        {
            stored = ScheduleRetryCall.Run(db, _keys, _consumer, SettledEntry.Of(entry), outcome.DelayMs, outcome.Error ?? string.Empty);
            if (stored)
            {
                // Else a retry stored after this consumer's last fetch would wait for its next poll (up to
                // PollInterval) instead of its backoff.
                _retryStored(outcome.DelayMs);
            }
        }
        else if (outcome.Kind == OutcomeKind.Cancel)
        {
            stored = SettleCanceledCall.Run(db, _keys, _consumer, SettledEntry.Of(entry), FinishedRetentionMs);
        }
        else if (outcome.Kind == OutcomeKind.UnknownType)
        {
            SendUnknownType(db, entry, outcome.Error!);
            return;
        }
        else
        {
            stored = DeadLetterCall.Run(db, _keys, _consumer, SettledEntry.Of(entry), outcome.Error ?? string.Empty, outcome.Reason ?? string.Empty, FinishedRetentionMs);
        }

        if (stored && outcome.Kind != OutcomeKind.Retry)
        {
            _ended();
        }

        if (!stored)
        {
            _logger.TryLog(
                static (l, s) => Log.OutcomeRefused(l, s._queue, s.Item2, s.JobId, s.StreamId),
                (_queue, outcome.Kind switch { OutcomeKind.Retry => "retry", OutcomeKind.Cancel => "cancel", _ => "dead letter" }, entry.JobId, entry.StreamId));
        }
    }

    /// <summary>
    /// A job of a type this instance does not run: handed back unrun (<c>postpone.lua</c>) while some consumer said
    /// within <see cref="DurableQueueOptions.UnknownJobTypeTimeout"/> that it runs the type (or, when none ever did,
    /// while the job is younger than that); else dead-lettered with reason <c>unknown-job-type</c>.
    /// </summary>
    private void SendUnknownType(IDatabase db, DurableEntry entry, string typeName)
    {
        var seen = db.HashGet(_keys.JobTypes, typeName);
        long since = Math.Max(entry.EnqueuedAtMs, seen.TryParse(out long seenMs) ? seenMs : 0);
        long timeoutMs = (long)_durable.UnknownJobTypeTimeoutOrDefault.TotalMilliseconds;
        bool stored;
        string what;
        if (_redisNowMs() - since <= timeoutMs)
        {
            long delayMs = Math.Max(1_000, (long)_durable.PollInterval.TotalMilliseconds);
            stored = PostponeCall.Run(db, _keys, _consumer, SettledEntry.Of(entry), delayMs);
            what = "hand-back of an unknown job type";
            if (stored)
            {
                _logger.TryLog(static (l, s) => Log.UnknownJobTypeHandedBack(l, s._queue, s.JobId, s.typeName), (_queue, entry.JobId, typeName));
            }
        }
        else
        {
            string error = seen.IsNull
                ? $"Durable queue '{_queue}': no instance that consumes the queue runs job type '{typeName}' (none said so since the job was enqueued, {_durable.UnknownJobTypeTimeoutOrDefault} ago); register it with AddJobType and requeue the dead letter."
                : $"Durable queue '{_queue}': no instance that consumes the queue has run job type '{typeName}' for {_durable.UnknownJobTypeTimeoutOrDefault} (UnknownJobTypeTimeout); register it with AddJobType and requeue the dead letter.";
            _logger.TryLog(static (l, s) => RedisStreamStore.Log.Unreadable(l, s._queue, s.StreamId, s.error), (_queue, entry.StreamId, error));
            stored = DeadLetterCall.Run(db, _keys, _consumer, SettledEntry.Of(entry), error, "unknown-job-type", FinishedRetentionMs);
            what = "dead letter";
            if (stored)
            {
                _ended();
            }
        }

        if (!stored)
        {
            _logger.TryLog(static (l, s) => Log.OutcomeRefused(l, s._queue, s.what, s.JobId, s.StreamId), (_queue, what, entry.JobId, entry.StreamId));
        }
    }

    /// <summary>
    /// Hands entries back, in as few scripts as their payloads' size allows (<see cref="RedisStreamStore.BatchPayloadBudget"/>); they are
    /// forgotten (no more heartbeats) only once Redis has them.
    /// </summary>
    private bool SendReleases(IDatabase db, List<Outcome> releases)
    {
        int start = 0;
        while (start < releases.Count)
        {
            int end = start + 1;
            long size = releases[start].Entry.Payload.Length;
            while (end < releases.Count && size + releases[end].Entry.Payload.Length <= RedisStreamStore.BatchPayloadBudget)
            {
                size += releases[end++].Entry.Payload.Length;
            }

            try
            {
                SendReleaseChunk(db, releases.GetRange(start, end - start));
            }
            catch (Exception ex) when (ex is RedisException or TimeoutException)
            {
                // What was not sent goes back to the queue with the chunk that failed.
                foreach (var release in releases.Skip(end))
                {
                    _outcomes.PutBack(release);
                }

                throw;
            }

            start = end;
        }

        return true;
    }

    private void SendReleaseChunk(IDatabase db, List<Outcome> releases)
    {
        long handedBack;
        try
        {
            handedBack = ReleaseCall.Run(db, _keys, _consumer, [.. releases.Select(static r => SettledEntry.Of(r.Entry))], FinishedRetentionMs);
        }
        catch (Exception ex) when (ex is RedisException or TimeoutException)
        {
            foreach (var release in releases)
            {
                _outcomes.PutBack(release);
            }

            throw;
        }

        foreach (var release in releases)
        {
            _held.Forget(release.Entry);
        }

        // A hand-back ends a job whose cancel was asked (see DurableScripts.Release).
        if (handedBack > 0)
        {
            _ended();
        }

        if (handedBack < releases.Count)
        {
            _logger.TryLog(static (l, s) => Log.HandBackRefused(l, s._queue, s.Item2, s.Count), (_queue, releases.Count - (int)handedBack, releases.Count));
        }
    }

    /// <summary>
    /// Settles a round's acknowledgements by what Redis did with each: applied (<paramref name="applied"/>) ones are no
    /// longer held here; refused ones are put back and sent again by a later turn (acknowledging twice is harmless; if
    /// this process dies first, they are reclaimed and run again: at least once). One the script could not read
    /// (<paramref name="invalid"/>: positions from 1, plain ones first as <paramref name="plain"/> says) would be refused
    /// every time: it is dropped here and logged, and stays pending in Redis, where it is reclaimed after the claim
    /// timeout and runs again. Returns whether any was acknowledged.
    /// </summary>
    public bool FinishCompleted(List<DurableEntry> entries, bool[] plain, bool applied, RedisResult[] invalid)
    {
        HashSet<DurableEntry>? dropped = null;
        if (invalid.Length > 0)
        {
            dropped = [.. invalid.Select(p => InSectionOrder(entries, plain, (int)p))];
            foreach (var entry in dropped)
            {
                _held.Forget(entry);
                _logger.TryLog(static (l, s) => Log.AcknowledgementUnreadable(l, s._queue, s.StreamId, s.JobId), (_queue, entry.StreamId, entry.JobId));
            }
        }

        foreach (var entry in entries)
        {
            if (dropped?.Contains(entry) == true)
            {
                continue;
            }

            if (applied)
            {
                _held.Forget(entry);
            }
            else
            {
                _outcomes.PutBackCompleted(entry);
            }
        }

        return applied && entries.Count > (dropped?.Count ?? 0);
    }

    /// <summary>The acknowledgement at <paramref name="position"/> (from 1) as the round sent them: the plain ones first, then the others.</summary>
    private static DurableEntry InSectionOrder(List<DurableEntry> entries, bool[] plain, int position)
    {
        int plainCount = plain.Count(static p => p);
        bool wantPlain = position <= plainCount;
        int skip = wantPlain ? position - 1 : position - plainCount - 1;
        for (int i = 0; i < entries.Count; i++)
        {
            if (plain[i] == wantPlain && skip-- == 0)
            {
                return entries[i];
            }
        }

        throw new InvalidOperationException($"The round named acknowledgement {position} of {entries.Count}.");
    }

    private static partial class Log
    {
        [LoggerMessage(530, LogLevel.Debug, "Durable queue '{Queue}': job {JobId} is of job type '{JobType}', which this instance does not run; handed back, unrun, for an instance that does", EventName = "DurableUnknownJobTypeHandedBack")]
        public static partial void UnknownJobTypeHandedBack(ILogger logger, string queue, string jobId, string jobType);

        [LoggerMessage(512, LogLevel.Warning, "Durable queue '{Queue}': the {Outcome} of job {JobId} was not stored: its entry {EntryId} is no longer this consumer's in Redis: another consumer reclaimed it after this one missed its heartbeats (and settles it there), or it was settled elsewhere.", EventName = "DurableOutcomeRefused")]
        public static partial void OutcomeRefused(ILogger logger, string queue, string outcome, string jobId, string entryId);

        [LoggerMessage(513, LogLevel.Warning, "Durable queue '{Queue}': {Count} of {Total} job(s) handed back were not: they are no longer this consumer's in Redis: another consumer reclaimed them after this one missed its heartbeats (and runs them there), or they were settled elsewhere.", EventName = "DurableHandBackRefused")]
        public static partial void HandBackRefused(ILogger logger, string queue, int count, int total);

        [LoggerMessage(516, LogLevel.Error, "Durable queue '{Queue}': the acknowledgement of entry {StreamId} (job {JobId}) could not be read by the round script and was dropped; the entry stays pending in Redis and runs again once reclaimed.", EventName = "DurableAcknowledgementUnreadable")]
        public static partial void AcknowledgementUnreadable(ILogger logger, string queue, string streamId, string jobId);
    }
}
