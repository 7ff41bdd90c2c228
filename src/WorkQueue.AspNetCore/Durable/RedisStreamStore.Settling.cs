using StackExchange.Redis;
using WorkQueue.Internal;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The outcomes the queue's threads report (<see cref="WorkQueue.Durability.IJobStore"/>) and cancels by id: each is queued in the
/// <see cref="OutcomeQueue"/> (never blocking the caller) and the store's thread woken. Completions are acknowledged in
/// batches with the turn's round (<c>.Round.cs</c>); the others are sent by the <see cref="OutcomeSettler"/>.
/// </summary>
internal sealed partial class RedisStreamStore
{
    private readonly OutcomeQueue _outcomes = new();
    private readonly OutcomeSettler _settler;

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

    private static string Describe(Exception error) => $"{error.GetType().FullName}: {error.Message}";

    /// <summary>When the entry started here (Unix ms), or an empty value when it never did.</summary>
    private static RedisValue StartedAt(DurableEntry entry) => entry.StartedAtMs > 0 ? entry.StartedAtMs : RedisValue.EmptyString;
}
