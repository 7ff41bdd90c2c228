using System.Collections.Concurrent;
using System.Diagnostics;
using WorkQueue.Internal;

namespace WorkQueue.Tracking;

/// <summary>
/// One in-memory queue's tracked jobs by id: the jobs whose id was handed out (enqueued with <see cref="JobOptions"/>,
/// or scheduled), from acceptance until <see cref="WorkQueueOptions.FinishedJobRetention"/> after they ended, at most
/// <see cref="WorkQueueOptions.MaxFinishedJobs"/> ended ones. Jobs enqueued without options are not tracked, so the
/// <c>TryEnqueue</c> path pays nothing for this; a tracked job costs one <see cref="TrackedJob"/> and a dictionary entry.
/// </summary>
/// <remarks>
/// <para>
/// The tracker only finds jobs; each job's state is its <see cref="TrackedJob"/>'s, which travels with the job in its
/// <see cref="WorkItem"/>, so no state change looks anything up.
/// </para>
/// <para>
/// For the job search, jobs are also kept in the order they were accepted (<see cref="LiveLog"/>, where ended ones are
/// skipped and compacted away), and ended jobs in logs in the order they ended: one of all endings and one per ending state. An ended job never changes state, so the logs are appended and
/// forgotten oldest first only; all of them change under one lock, so the oldest of all endings is also the oldest of
/// its own state's log, and forgetting it there is taking that log's first entry.
/// </para>
/// </remarks>
internal sealed partial class JobTracker
{
    private const int FirstEnding = (int)JobState.Succeeded;
    private const int EndingCount = (int)JobState.Abandoned - FirstEnding + 1;

    private readonly ConcurrentDictionary<long, TrackedJob> _jobs = new();

    // The jobs in the order they were accepted, ended ones included until the next compaction; guarded by _liveLock.
    private readonly Lock _liveLock = new();
    private readonly LiveLog _live = new();
    private long _trackSequence;
    private int _goneInLive;

    // Guards the logs and the sequence; held for a few array writes (or a page's worth of copying), never around user code.
    private readonly Lock _endedLock = new();
    private readonly EndedLog _ended = new();
    private readonly EndedLog[] _endedByState = CreateLogs();
    private readonly TimeProvider _time;
    private readonly long _retentionTicks;
    private readonly int _maxEnded;
    private long _endSequence;

    public JobTracker(TimeProvider time, TimeSpan retention, int maxEnded)
    {
        _time = time;
        _retentionTicks = (long)(retention.TotalSeconds * time.TimestampFrequency);
        _maxEnded = retention > TimeSpan.Zero ? maxEnded : 0;
    }

    /// <summary>Gets the number of jobs tracked, ended ones included (for tests).</summary>
    public int Count => _jobs.Count;

    /// <summary>Gets the number of entries in the live log, ended ones not yet compacted away included (for tests).</summary>
    internal int LiveLogCount
    {
        get
        {
            lock (_liveLock)
            {
                return _live.Count;
            }
        }
    }

    internal DateTimeOffset Now => _time.GetUtcNow();

    internal long Timestamp => _time.GetTimestamp();

    /// <summary>Starts tracking a job that is being accepted (before anyone can run it).</summary>
    public TrackedJob Track(long id, JobInvoker invoker, object? target, string? key, DateTimeOffset? runAt, object? payload = null)
    {
        var job = new TrackedJob(this, id, invoker, target, key, _time.GetUtcNow(), runAt, payload);
        _jobs[id] = job;
        lock (_liveLock)
        {
            job.TrackSequence = ++_trackSequence;
            CompactLiveIfMostlyGoneLocked();
            _live.Append(job);
        }

        return job;
    }

    /// <summary>The enqueue that took <paramref name="id"/> was refused: no job has it.</summary>
    public void Forget(long id)
    {
        if (_jobs.TryRemove(id, out var job))
        {
            job.MarkForgotten();
            Interlocked.Increment(ref _goneInLive);
        }
    }

    /// <summary>Finds a job that lives, or ended within the retention.</summary>
    public TrackedJob? Find(long id)
    {
        if (!_jobs.TryGetValue(id, out var job))
        {
            return null;
        }

        if (job.IsEnded && IsExpired(job, _time.GetTimestamp()))
        {
            lock (_endedLock)
            {
                PruneLocked();
            }

            return null;
        }

        return job;
    }

    /// <summary>Called once by the job as it ends.</summary>
    internal void OnEnded(TrackedJob job)
    {
        // A queue that stops accepting jobs must not keep its ended ones in the live log forever; whoever finds the
        // lock free compacts (a producer does it on its next Track anyway).
        // (The count is read without the lock: a stale value only moves the compaction by one ending.)
        int gone = Interlocked.Increment(ref _goneInLive);
        if (gone >= 16 && gone * 2 >= _live.Count && _liveLock.TryEnter())
        {
            try
            {
                CompactLiveIfMostlyGoneLocked();
            }
            finally
            {
                _liveLock.Exit();
            }
        }

        if (_maxEnded == 0)
        {
            _jobs.TryRemove(new KeyValuePair<long, TrackedJob>(job.Id, job));
            return;
        }

        Debug.Assert(TrackedJob.IsEnding(job.State), "Only an ended job is logged as ended.");
        lock (_endedLock)
        {
            job.EndSequence = ++_endSequence;
            _ended.Append(job);
            _endedByState[(int)job.State - FirstEnding].Append(job);
            PruneLocked();
        }
    }

    private static EndedLog[] CreateLogs()
    {
        var logs = new EndedLog[EndingCount];
        for (int i = 0; i < logs.Length; i++)
        {
            logs[i] = new EndedLog();
        }

        return logs;
    }

    /// <summary>
    /// Drops the ended entries of the live log once they are half of it, so it holds about twice the jobs in flight
    /// (amortized: each compaction removes at least as many entries as it keeps).
    /// </summary>
    private void CompactLiveIfMostlyGoneLocked()
    {
        Debug.Assert(_liveLock.IsHeldByCurrentThread, "The live log changes under its lock.");
        if (_live.Count >= 32 && Volatile.Read(ref _goneInLive) * 2 >= _live.Count)
        {
            Interlocked.Add(ref _goneInLive, -_live.Compact());
        }
    }

    private bool IsExpired(TrackedJob job, long now) => now - job.EndedTimestamp >= _retentionTicks;

    /// <summary>Forgets the oldest ended jobs beyond the count, and those past the retention.</summary>
    private void PruneLocked()
    {
        Debug.Assert(_endedLock.IsHeldByCurrentThread, "The logs change under their lock.");
        long now = _time.GetTimestamp();
        while (_ended.Count > 0 && (_ended.Count > _maxEnded || IsExpired(_ended[0], now)))
        {
            var removed = _ended.RemoveFirst();
            var ofState = _endedByState[(int)removed.State - FirstEnding].RemoveFirst();
            Debug.Assert(ReferenceEquals(removed, ofState), "The oldest ending is also the oldest of its state.");
            _jobs.TryRemove(new KeyValuePair<long, TrackedJob>(removed.Id, removed));
        }
    }
}
