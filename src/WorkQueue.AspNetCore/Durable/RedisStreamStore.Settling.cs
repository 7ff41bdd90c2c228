using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.Internal;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// How outcomes are written back: queued by the queue's threads (never blocking them), sent by the store's thread.
/// Completions are acknowledged and deleted in batches, with the turn's round (<c>.Round.cs</c>); retries, dead letters and hand-backs each go through their
/// script, which acts only while this consumer still owns the entry (one a survivor has reclaimed is settled there).
/// </summary>
internal sealed partial class RedisStreamStore
{
    private readonly OutcomeQueue _outcomes = new();

    public void Completed(in WorkItem item)
    {
        var entry = (DurableEntry)item.Target!;
        if (entry.CancelRequested)
        {
            _logger.TryLog(static (l, s) => Log.CancelIgnored(l, s._queue, s.JobId, "it returned normally"), (_queue, entry.JobId));
        }

        // Acknowledged even if another consumer reclaimed it meanwhile: the job did complete, and the acknowledgement
        // spares that consumer a second run if it has not started it yet.
        _outcomes.Completed(entry);
        Signal();
    }

    public void ScheduleRetry(in WorkItem item, TimeSpan delay, Exception error)
    {
        _outcomes.Retry((DurableEntry)item.Target!, (long)delay.TotalMilliseconds, Describe(error));
        Signal();
    }

    public void DeadLetter(in WorkItem item, Exception error)
    {
        var entry = (DurableEntry)item.Target!;
        if (entry.CancelRequested)
        {
            _logger.TryLog(static (l, s) => Log.CancelIgnored(l, s._queue, s.JobId, s.Item3), (_queue, entry.JobId, $"it threw {error.GetType().Name}, so it is dead-lettered without a retry"));
        }

        _outcomes.DeadLetter(entry, Describe(error), "failed");
        Signal();
    }

    public void Canceled(in WorkItem item)
    {
        _outcomes.Cancel((DurableEntry)item.Target!);
        Signal();
    }

    /// <summary>A cancel by id reached this process (the store's subscription): fires the token of the entry held here, or drops it unstarted.</summary>
    private void OnCancelMessage(string? streamId)
    {
        if (streamId is null || !_held.TryGet(streamId, out var entry))
        {
            // Not held here: another instance holds it, or it was settled meanwhile (its outcome is on its way).
            return;
        }

        if (entry.RequestCancel())
        {
            // Not started: it will not run here (TryStart refuses it), and is settled as cancelled now.
            _outcomes.Cancel(entry);
            Signal();
        }
    }

    public void Release(in WorkItem item)
    {
        var held = (DurableEntry)item.Target!;
        if (held.IsTakenBack || held.CanceledBeforeStart)
        {
            // Already stored again, as a new entry (Redis had lost it); or cancelled by id, and settled so.
            return;
        }

        _outcomes.Release(held);
        Signal();
    }

    /// <summary>
    /// Sends queued retries, dead letters and hand-backs (completions travel with the turn's round, see <c>.Round.cs</c>);
    /// returns whether it sent anything (there may be more). An outcome Redis refuses goes to the back of the queue and
    /// ends the pass, so it is tried again after the backoff without holding up the others.
    /// </summary>
    private bool SendOutcomes(IDatabase db)
    {
        bool sent = false;
        var releases = new List<Outcome>();
        try
        {
            int budget = BatchSize;
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
            stored = ScheduleRetryCall.Run(db, Keys, ConsumerName, SettledEntry.Of(entry), outcome.DelayMs, outcome.Error ?? string.Empty);
            if (stored)
            {
                // This consumer learns due times from its fetches: without this, a retry stored after its last fetch
                // would wait for the next poll (up to PollInterval) instead of its backoff. The script nudges the
                // others when this retry is the earliest due.
                _nextPoll = Math.Min(_nextPoll, _time.GetTimestamp() + Ticks(TimeSpan.FromMilliseconds(outcome.DelayMs)));
            }
        }
        else if (outcome.Kind == OutcomeKind.Cancel)
        {
            stored = SettleCanceledCall.Run(db, Keys, ConsumerName, SettledEntry.Of(entry), FinishedRetentionMs);
        }
        else if (outcome.Kind == OutcomeKind.UnknownType)
        {
            SendUnknownType(db, entry, outcome.Error!);
            return;
        }
        else
        {
            stored = DeadLetterCall.Run(db, Keys, ConsumerName, SettledEntry.Of(entry), outcome.Error ?? string.Empty, outcome.Reason ?? string.Empty, FinishedRetentionMs);
        }

        if (stored && outcome.Kind != OutcomeKind.Retry)
        {
            _endedSinceTrim = true;
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
        var seen = db.HashGet(Keys.JobTypes, typeName);
        long since = Math.Max(entry.EnqueuedAtMs, seen.TryParse(out long seenMs) ? seenMs : 0);
        long timeoutMs = (long)_durable.UnknownJobTypeTimeoutOrDefault.TotalMilliseconds;
        bool stored;
        string what;
        if (RedisNowMs() - since <= timeoutMs)
        {
            long delayMs = Math.Max(1_000, (long)_durable.PollInterval.TotalMilliseconds);
            stored = PostponeCall.Run(db, Keys, ConsumerName, SettledEntry.Of(entry), delayMs);
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
            _logger.TryLog(static (l, s) => Log.Unreadable(l, s._queue, s.StreamId, s.error), (_queue, entry.StreamId, error));
            stored = DeadLetterCall.Run(db, Keys, ConsumerName, SettledEntry.Of(entry), error, "unknown-job-type", FinishedRetentionMs);
            what = "dead letter";
            _endedSinceTrim |= stored;
        }

        if (!stored)
        {
            _logger.TryLog(static (l, s) => Log.OutcomeRefused(l, s._queue, s.what, s.JobId, s.StreamId), (_queue, what, entry.JobId, entry.StreamId));
        }
    }

    /// <summary>
    /// Hands entries back, in as few scripts as their payloads' size allows (<see cref="BatchPayloadBudget"/>); they are
    /// forgotten (no more heartbeats) only once Redis has them.
    /// </summary>
    private bool SendReleases(IDatabase db, List<Outcome> releases)
    {
        int start = 0;
        while (start < releases.Count)
        {
            int end = start + 1;
            long size = releases[start].Entry.Payload.Length;
            while (end < releases.Count && size + releases[end].Entry.Payload.Length <= BatchPayloadBudget)
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
            handedBack = ReleaseCall.Run(db, Keys, ConsumerName, [.. releases.Select(static r => SettledEntry.Of(r.Entry))], FinishedRetentionMs);
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
        _endedSinceTrim |= handedBack > 0;

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
    private bool FinishCompleted(List<DurableEntry> entries, bool[] plain, bool applied, RedisResult[] invalid)
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

    private static string Describe(Exception error) => $"{error.GetType().FullName}: {error.Message}";

    /// <summary>When the entry started here (Unix ms), or an empty value when it never did.</summary>
    private static RedisValue StartedAt(DurableEntry entry) => entry.StartedAtMs > 0 ? entry.StartedAtMs : RedisValue.EmptyString;
}
