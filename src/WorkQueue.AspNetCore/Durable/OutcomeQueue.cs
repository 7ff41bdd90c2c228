using System.Collections.Concurrent;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The outcomes of a durable queue's jobs on their way to Redis: queued by whatever thread decides them (a worker as its
/// job ends, the store's thread as it fetches or finds an entry lost, the subscription's as a cancel by id arrives),
/// never blocking it, and taken by the store's thread, which sends them. Completions wait apart: they are acknowledged
/// in batches with the turn's round (<see cref="TakeCompleted"/>); the others (retries, dead letters, cancels, hand-backs,
/// unknown job types) go through their own scripts (<see cref="OutcomeSettler"/>). What Redis did not take is put back
/// and sent again by a later turn.
/// </summary>
/// <remarks>
/// Two lock-free queues: a completion, once per job from a worker thread, costs one enqueue (the caller then signals the
/// store's thread). The store's thread alone takes and puts back.
/// </remarks>
internal sealed class OutcomeQueue
{
    private readonly ConcurrentQueue<DurableEntry> _completed = new();
    private readonly ConcurrentQueue<Outcome> _outcomes = new();

    /// <summary>Gets a value indicating whether no outcome waits to be sent (a stopping store waits for it).</summary>
    public bool IsEmpty => _outcomes.IsEmpty && _completed.IsEmpty;

    /// <summary>Queues a completed job's acknowledgement (sent with a round).</summary>
    public void Completed(DurableEntry entry) => _completed.Enqueue(entry);

    /// <summary>Queues a retry after <paramref name="delayMs"/>, with the error that failed the attempt.</summary>
    public void Retry(DurableEntry entry, long delayMs, string error) => _outcomes.Enqueue(new Outcome(OutcomeKind.Retry, entry, delayMs, error, null));

    /// <summary>Queues a dead letter with its error and reason (<c>failed</c> or <c>unreadable</c>).</summary>
    public void DeadLetter(DurableEntry entry, string error, string reason) => _outcomes.Enqueue(new Outcome(OutcomeKind.DeadLetter, entry, 0, error, reason));

    /// <summary>Queues a cancelled job's settling.</summary>
    public void Cancel(DurableEntry entry) => _outcomes.Enqueue(new Outcome(OutcomeKind.Cancel, entry, 0, null, null));

    /// <summary>Queues an entry's hand-back, unrun (or, for an entry Redis lost, its storing again).</summary>
    public void Release(DurableEntry entry) => _outcomes.Enqueue(new Outcome(OutcomeKind.Release, entry, 0, null, null));

    /// <summary>Queues a fetched job of a type this instance does not run (<paramref name="typeName"/>): handed back or dead-lettered.</summary>
    public void UnknownType(DurableEntry entry, string typeName) => _outcomes.Enqueue(new Outcome(OutcomeKind.UnknownType, entry, 0, typeName, null));

    /// <summary>Takes the next outcome other than a completion to send.</summary>
    public bool TryTake(out Outcome outcome) => _outcomes.TryDequeue(out outcome);

    /// <summary>Puts back an outcome Redis did not take, at the back of the queue (it is tried again without holding up the others).</summary>
    public void PutBack(Outcome outcome) => _outcomes.Enqueue(outcome);

    /// <summary>Takes the next batch of at most <paramref name="max"/> completed entries to acknowledge; <see langword="null"/> when there is none.</summary>
    public List<DurableEntry>? TakeCompleted(int max)
    {
        if (_completed.IsEmpty)
        {
            return null;
        }

        var entries = new List<DurableEntry>(Math.Min(max, _completed.Count));
        while (entries.Count < max && _completed.TryDequeue(out var entry))
        {
            entries.Add(entry);
        }

        return entries.Count == 0 ? null : entries;
    }

    /// <summary>Puts back a completed entry whose acknowledgement Redis did not apply.</summary>
    public void PutBackCompleted(DurableEntry entry) => _completed.Enqueue(entry);

    /// <summary>Puts back completed entries whose round failed.</summary>
    public void PutBackCompleted(List<DurableEntry> entries)
    {
        foreach (var entry in entries)
        {
            _completed.Enqueue(entry);
        }
    }
}

/// <summary>What becomes of a job other than completing: each kind has its script (<see cref="OutcomeSettler"/>).</summary>
internal enum OutcomeKind
{
    Retry,
    DeadLetter,
    Release,
    Cancel,

    /// <summary>A fetched job of a type this instance does not run (its name in <see cref="Outcome.Error"/>).</summary>
    UnknownType,
}

/// <summary>An outcome on its way to Redis; <see cref="Reason"/> is the dead letter's (<c>failed</c> or <c>unreadable</c>).</summary>
internal readonly record struct Outcome(OutcomeKind Kind, DurableEntry Entry, long DelayMs, string? Error, string? Reason);
