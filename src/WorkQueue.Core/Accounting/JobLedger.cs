using System.Collections.Concurrent;
using WorkQueue.Internal;
using WorkQueue.Tracking;

namespace WorkQueue.Accounting;

/// <summary>
/// Counts one queue's jobs. Every accepted job ends through exactly one of <see cref="Succeeded"/>,
/// <see cref="DeadLettered"/>, <see cref="Dropped"/>, <see cref="Abandoned"/>, <see cref="Canceled"/> / <see cref="CanceledBeforeStart"/> or (durable queues) <see cref="Returned"/>, so
/// <c>accepted = ended + unfinished</c> holds by construction; each ending (and each rejection, which a concurrent
/// drain check may have counted as unfinished) tells the drain group, if the queue is stopping. For a tracked job (see
/// <see cref="TrackedJob"/>) each ending also ends its state machine and counts only if it was the first ending, so the
/// rule holds however a cancel races the job's other endings.
/// </summary>
internal sealed class JobLedger
{
    private readonly ConcurrentQueue<AbandonedJob> _abandonedJobs = new();

    // Written by the enqueuing threads on every call; the counters below by the workers on every job. Apart, so that the
    // two sides do not pass one cache line back and forth.
    private PaddedInt64 _attempts;
    private long _rejected;
    private long _started;
    private long _succeeded;
    private long _failed;
    private long _retried;
    private long _deadLettered;
    private long _dropped;
    private long _abandoned;
    private long _returned;
    private long _canceled;
    private volatile IDrainListener? _drain;

    /// <summary>Gets a number that changes whenever a job is offered: what a spinning worker watches.</summary>
    public long Offers => Volatile.Read(ref _attempts.Value);

    /// <summary>Gets the jobs that were abandoned, in the order they were reported.</summary>
    public IReadOnlyList<AbandonedJob> AbandonedJobs => [.. _abandonedJobs];

    /// <summary>Counts an enqueue attempt and returns its number, which doubles as the job's id.</summary>
    public long Offer() => Interlocked.Increment(ref _attempts.Value);

    public void Rejected()
    {
        Interlocked.Increment(ref _rejected);
        _drain?.OnJobEnded();
    }

    public void Started() => Interlocked.Increment(ref _started);

    public void AttemptFailed() => Interlocked.Increment(ref _failed);

    public void RetryScheduled() => Interlocked.Increment(ref _retried);

    /// <summary>Gets the queue's idempotency keys (in-memory queues; a durable queue keeps its keys in its store).</summary>
    public IdempotencyKeys? Keys { get; init; }

    public bool Succeeded(in WorkItem item)
    {
        if (!Settle(item, JobState.Succeeded))
        {
            return false;
        }

        ReleaseKey(item, succeeded: true);
        End(ref _succeeded);
        return true;
    }

    public bool DeadLettered(in WorkItem item)
    {
        if (!Settle(item, JobState.DeadLettered))
        {
            return false;
        }

        ReleaseKey(item, succeeded: false);
        End(ref _deadLettered);
        return true;
    }

    public bool Dropped(in WorkItem item)
    {
        if (!Settle(item, JobState.Dropped))
        {
            return false;
        }

        ReleaseKey(item, succeeded: false);
        End(ref _dropped);
        return true;
    }

    public bool Abandoned(AbandonedJob job, in WorkItem item)
    {
        if (!Settle(item, JobState.Abandoned))
        {
            return false;
        }

        ReleaseKey(item, succeeded: false);
        _abandonedJobs.Enqueue(job);
        End(ref _abandoned);
        return true;
    }

    /// <summary>A durable queue's job left this process for its store: a retry stored there, or handed back unstarted or cancelled at a stop.</summary>
    public void Returned() => End(ref _returned);

    /// <summary>A scheduled job was cancelled before it came due, or a running job honoured its cancel.</summary>
    public bool Canceled(in WorkItem item)
    {
        if (!Settle(item, JobState.Canceled))
        {
            return false;
        }

        ReleaseKey(item, succeeded: false);
        End(ref _canceled);
        return true;
    }

    /// <summary>
    /// A tracked job that is not running (queued, scheduled, or waiting to retry) is cancelled: it will not run. Its item
    /// may still sit in the channel or a due queue; whoever takes it finds it ended and drops it uncounted.
    /// </summary>
    public bool CanceledBeforeStart(TrackedJob job)
    {
        if (!job.TryEnd(JobState.Canceled, beforeStartOnly: true))
        {
            return false;
        }

        if (job.Key is { } key)
        {
            Keys?.Release(key, job.Id, succeeded: false);
        }

        End(ref _canceled);
        return true;
    }

    /// <summary>An enqueue with a key was refused after it took an id: the key is free again.</summary>
    public void ReleaseRefused(string? key, long id)
    {
        if (key is not null)
        {
            Keys?.Release(key, id, succeeded: false);
        }
    }

    /// <summary>Starts telling <paramref name="drain"/> about every ending, from now on.</summary>
    public void Attach(IDrainListener drain) => _drain = drain;

    /// <summary>
    /// Reads the ended counters. A drain check reads every queue's ended counters before any accepted ones: all only
    /// grow, and a job enqueued by a running job is counted before its parent ends, so the sum can be too high (the
    /// drain waits a little longer), never too low.
    /// </summary>
    public long ReadEnded() =>
        Volatile.Read(ref _succeeded) + Volatile.Read(ref _deadLettered) + Volatile.Read(ref _dropped) + Volatile.Read(ref _abandoned) + Volatile.Read(ref _returned) + Volatile.Read(ref _canceled);

    /// <summary>Reads the accepted count: rejections before attempts, so a rejection seen here is never one whose attempt is missed.</summary>
    public long ReadAccepted()
    {
        long rejected = Volatile.Read(ref _rejected);
        return Volatile.Read(ref _attempts.Value) - rejected;
    }

    public long Unfinished
    {
        get
        {
            long ended = ReadEnded();
            return Math.Max(0, ReadAccepted() - ended);
        }
    }

    public WorkQueueTotals Totals => new(
        Enqueued: Volatile.Read(ref _attempts.Value) - Volatile.Read(ref _rejected),
        Rejected: Volatile.Read(ref _rejected),
        Started: Volatile.Read(ref _started),
        Succeeded: Volatile.Read(ref _succeeded),
        Failed: Volatile.Read(ref _failed),
        Retried: Volatile.Read(ref _retried),
        DeadLettered: Volatile.Read(ref _deadLettered),
        Dropped: Volatile.Read(ref _dropped),
        Abandoned: Volatile.Read(ref _abandoned),
        Returned: Volatile.Read(ref _returned),
        Canceled: Volatile.Read(ref _canceled),
        Unfinished: Unfinished);

    /// <summary>
    /// Ends a tracked job's state machine, once: a job cancelled while it waited in the channel is still taken (and
    /// dropped, dropped by DropOldest, or found by a stop) later, and must not be counted a second time.
    /// </summary>
    private static bool Settle(in WorkItem item, JobState ending) => item.Tracked is not { } job || job.TryEnd(ending);

    private void ReleaseKey(in WorkItem item, bool succeeded)
    {
        // Before the ending is counted: a drain that sees the job ended must not find its key still held.
        if (item.Key is { } key)
        {
            Keys?.Release(key, item.Id, succeeded);
        }
    }

    private void End(ref long counter)
    {
        Interlocked.Increment(ref counter);
        _drain?.OnJobEnded();
    }
}
