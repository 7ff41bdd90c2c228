using System.Collections.Concurrent;
using StackExchange.Redis;
using WorkQueue.Internal;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// How outcomes are written back: queued by the queue's threads (never blocking them), sent by the store's thread.
/// Completions are acknowledged and deleted in batches; retries, dead letters and hand-backs each go through their
/// script, which acts only while this consumer still owns the entry (one a survivor has reclaimed is settled there).
/// </summary>
internal sealed partial class RedisStreamStore
{
    private readonly ConcurrentQueue<string> _completed = new();
    private readonly ConcurrentQueue<Outcome> _outcomes = new();

    public void Completed(in WorkItem item)
    {
        var entry = (DurableEntry)item.Target!;

        // Acknowledged even if another consumer reclaimed it meanwhile: the job did complete, and the acknowledgement
        // spares that consumer a second run if it has not started it yet.
        _completed.Enqueue(entry.StreamId);
        Signal();
    }

    public void ScheduleRetry(in WorkItem item, TimeSpan delay, Exception error)
    {
        _outcomes.Enqueue(new Outcome(OutcomeKind.Retry, (DurableEntry)item.Target!, (long)delay.TotalMilliseconds, null));
        Signal();
    }

    public void DeadLetter(in WorkItem item, Exception error)
    {
        _outcomes.Enqueue(new Outcome(OutcomeKind.DeadLetter, (DurableEntry)item.Target!, 0, Describe(error)));
        Signal();
    }

    public void Release(in WorkItem item)
    {
        _outcomes.Enqueue(new Outcome(OutcomeKind.Release, (DurableEntry)item.Target!, 0, null));
        Signal();
    }

    /// <summary>Sends queued retries, dead letters and hand-backs; returns whether it sent anything (there may be more).</summary>
    private bool SendOutcomes(IDatabase db)
    {
        bool sent = false;
        var releases = new List<DurableEntry>();
        int budget = BatchSize;
        while (budget-- > 0 && _outcomes.TryPeek(out var outcome))
        {
            switch (outcome.Kind)
            {
                case OutcomeKind.Retry:
                    db.ScriptEvaluate(
                        DurableScripts.ScheduleRetry,
                        [Keys.Stream, Keys.Delayed],
                        [RedisStreamKeys.Group, ConsumerName, outcome.Entry.StreamId, outcome.DelayMs, RetryMember(outcome.Entry)]);
                    break;
                case OutcomeKind.DeadLetter:
                    db.ScriptEvaluate(
                        DurableScripts.DeadLetter,
                        [Keys.Stream, Keys.Dead],
                        [RedisStreamKeys.Group, ConsumerName, outcome.Entry.StreamId, outcome.Entry.JobId, outcome.Entry.Payload, outcome.Entry.Attempt, outcome.Entry.EnqueuedAtMs, outcome.Error, "failed"]);
                    break;
                case OutcomeKind.Release:
                    releases.Add(outcome.Entry);
                    break;
            }

            // Taken off the queue only once Redis has it: a failed call is tried again, never dropped.
            _outcomes.TryDequeue(out _);
            Forget(outcome.Entry);
            sent = true;
        }

        if (releases.Count > 0)
        {
            var args = new List<RedisValue>(3 + (releases.Count * 5)) { RedisStreamKeys.Group, ConsumerName, Keys.NudgeName };
            foreach (var entry in releases)
            {
                args.Add(entry.StreamId);
                args.Add(entry.JobId);
                args.Add(entry.Payload);
                args.Add(entry.Attempt);
                args.Add(entry.EnqueuedAtMs);
            }

            try
            {
                db.ScriptEvaluate(DurableScripts.Release, [Keys.Stream], [.. args]);
            }
            catch (Exception ex) when (ex is RedisException or TimeoutException)
            {
                // Not handed back: they stay pending here and are reclaimed by another instance after the claim timeout.
                OnRedisError(ex);
            }
        }

        return sent;
    }

    /// <summary>Takes the next batch of completed entries to acknowledge; <see langword="null"/> when there is none.</summary>
    private List<RedisValue>? TakeCompleted()
    {
        if (_completed.IsEmpty)
        {
            return null;
        }

        var ids = new List<RedisValue>(Math.Min(BatchSize, _completed.Count));
        while (ids.Count < BatchSize && _completed.TryDequeue(out var id))
        {
            ids.Add(id);
        }

        return ids;
    }

    /// <summary>Redis has acknowledged and deleted them: they are no longer held here.</summary>
    private void ForgetCompleted(List<RedisValue> ids)
    {
        foreach (var id in ids)
        {
            _held.TryRemove((string)id!, out _);
            _lost.TryRemove((string)id!, out _);
        }
    }

    /// <summary>The call that carried them failed: put back for the next attempt.</summary>
    private void PutBackCompleted(List<RedisValue> ids)
    {
        // If this process dies first, they are reclaimed and run again (at least once).
        foreach (var id in ids)
        {
            _completed.Enqueue((string)id!);
        }
    }

    private void Forget(DurableEntry entry)
    {
        _held.TryRemove(entry.StreamId, out _);
        _lost.TryRemove(entry.StreamId, out _);
    }

    private static string RetryMember(DurableEntry entry) =>
        string.Create(System.Globalization.CultureInfo.InvariantCulture, $"{entry.JobId}|{entry.Attempt + 1}|{entry.EnqueuedAtMs}|{entry.Payload}");

    private static string Describe(Exception error) => $"{error.GetType().FullName}: {error.Message}";

    private enum OutcomeKind
    {
        Retry,
        DeadLetter,
        Release,
    }

    private readonly record struct Outcome(OutcomeKind Kind, DurableEntry Entry, long DelayMs, string? Error);
}
