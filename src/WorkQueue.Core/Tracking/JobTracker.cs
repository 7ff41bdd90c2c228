using System.Collections.Concurrent;
using WorkQueue.Internal;

namespace WorkQueue.Tracking;

/// <summary>
/// One in-memory queue's tracked jobs by id: the jobs whose id was handed out (enqueued with <see cref="JobOptions"/>,
/// or scheduled), from acceptance until <see cref="WorkQueueOptions.FinishedJobRetention"/> after they ended, at most
/// <see cref="WorkQueueOptions.MaxFinishedJobs"/> ended ones. Jobs enqueued without options are not tracked, so the
/// <c>TryEnqueue</c> path pays nothing for this; a tracked job costs one <see cref="TrackedJob"/> and a dictionary entry.
/// </summary>
/// <remarks>
/// The tracker only finds jobs; each job's state is its <see cref="TrackedJob"/>'s, which travels with the job in its
/// <see cref="WorkItem"/>, so no state change looks anything up.
/// </remarks>
internal sealed class JobTracker
{
    private readonly ConcurrentDictionary<long, TrackedJob> _jobs = new();

    // Ended jobs, in the order they ended, so the oldest are forgotten first.
    private readonly ConcurrentQueue<TrackedJob> _ended = new();
    private readonly Lock _pruneLock = new();
    private readonly TimeProvider _time;
    private readonly long _retentionTicks;
    private readonly int _maxEnded;
    private int _endedCount;

    public JobTracker(TimeProvider time, TimeSpan retention, int maxEnded)
    {
        _time = time;
        _retentionTicks = (long)(retention.TotalSeconds * time.TimestampFrequency);
        _maxEnded = retention > TimeSpan.Zero ? maxEnded : 0;
    }

    /// <summary>Gets the number of jobs tracked, ended ones included (for tests).</summary>
    public int Count => _jobs.Count;

    internal DateTimeOffset Now => _time.GetUtcNow();

    internal long Timestamp => _time.GetTimestamp();

    /// <summary>Starts tracking a job that is being accepted (before anyone can run it).</summary>
    public TrackedJob Track(long id, JobInvoker invoker, object? target, string? key, DateTimeOffset? runAt)
    {
        var job = new TrackedJob(this, id, invoker, target, key, _time.GetUtcNow(), runAt);
        _jobs[id] = job;
        return job;
    }

    /// <summary>The enqueue that took <paramref name="id"/> was refused: no job has it.</summary>
    public void Forget(long id) => _jobs.TryRemove(id, out _);

    /// <summary>Finds a job that lives, or ended within the retention.</summary>
    public TrackedJob? Find(long id)
    {
        if (!_jobs.TryGetValue(id, out var job))
        {
            return null;
        }

        if (job.IsEnded && IsExpired(job, _time.GetTimestamp()))
        {
            Prune();
            return null;
        }

        return job;
    }

    /// <summary>Called once by the job as it ends.</summary>
    internal void OnEnded(TrackedJob job)
    {
        if (_maxEnded == 0)
        {
            _jobs.TryRemove(new KeyValuePair<long, TrackedJob>(job.Id, job));
            return;
        }

        _ended.Enqueue(job);
        Interlocked.Increment(ref _endedCount);
        Prune();
    }

    private bool IsExpired(TrackedJob job, long now) => now - job.EndedTimestamp >= _retentionTicks;

    /// <summary>Forgets the oldest ended jobs beyond the count, and those past the retention.</summary>
    private void Prune()
    {
        // One thread prunes at a time (the queue's order is what makes "oldest first" true); others leave it to it.
        if (!_pruneLock.TryEnter())
        {
            return;
        }

        try
        {
            long now = _time.GetTimestamp();
            while (_ended.TryPeek(out var oldest)
                && (Volatile.Read(ref _endedCount) > _maxEnded || IsExpired(oldest, now))
                && _ended.TryDequeue(out var removed))
            {
                Interlocked.Decrement(ref _endedCount);
                _jobs.TryRemove(new KeyValuePair<long, TrackedJob>(removed.Id, removed));
            }
        }
        finally
        {
            _pruneLock.Exit();
        }
    }
}
