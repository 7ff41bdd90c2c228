using System.Diagnostics;

namespace WorkQueue.Tracking;

/// <summary>The job search: a page of tracked jobs by state and text, in flight first, then ended (see <see cref="JobQuery"/>).</summary>
internal sealed partial class JobTracker
{
    /// <summary>How many ended jobs one hold of the lock copies, so a long search never keeps jobs from ending for long.</summary>
    private const int CopyChunk = 512;

    private const int AllStates = (1 << ((int)JobState.Abandoned + 1)) - 1;
    private const int LiveStates = (1 << (int)JobState.Queued) | (1 << (int)JobState.Scheduled) | (1 << (int)JobState.Running) | (1 << (int)JobState.Retrying);
    private const int EndedStates = AllStates & ~LiveStates;

    /// <summary>Finds one page of jobs; <paramref name="query"/> was validated by the caller.</summary>
    public JobPage Query(JobQuery query, string queueName)
    {
        int states = StateMask(query.States);
        var cursor = query.Cursor is { } text && JobCursor.TryParse(text, out var parsed) ? parsed : JobCursor.Start;
        var found = new List<JobStatus>(Math.Min(query.Limit, 64));
        int scanned = 0;

        if (!cursor.Ended)
        {
            if ((states & LiveStates) != 0)
            {
                var next = FindLive(query, states & LiveStates, cursor.Before, queueName, found, ref scanned);
                if (next is not null)
                {
                    return new JobPage(found, next, scanned);
                }
            }

            cursor = JobCursor.EndedStart;
        }

        string? endedNext = (states & EndedStates) != 0 ? FindEnded(query, states & EndedStates, cursor.Before, queueName, found, ref scanned) : null;
        return new JobPage(found, endedNext, scanned);
    }

    private static int StateMask(IReadOnlyCollection<JobState>? states)
    {
        if (states is null || states.Count == 0)
        {
            return AllStates;
        }

        int mask = 0;
        foreach (var state in states)
        {
            mask |= 1 << (int)state;
        }

        return mask;
    }

    private static bool Matches(TrackedJob job, JobQuery query) =>
        (query.NameContains is not { } name || job.Name.Contains(name, StringComparison.OrdinalIgnoreCase))
        && (query.ErrorContains is not { } error || (job.LastError?.Contains(error, StringComparison.OrdinalIgnoreCase) ?? false));

    /// <summary>
    /// Adds the jobs in flight accepted before <paramref name="before"/>, latest first, until the page is full or
    /// <see cref="JobQuery.ScanLimit"/> entries were read (jobs in flight change state all the time, so no index can say
    /// which are running: they are read one by one, ended ones skipped).
    /// </summary>
    /// <returns>The cursor to continue among jobs in flight, or <see langword="null"/> when none is left to read.</returns>
    private string? FindLive(JobQuery query, int states, long before, string queueName, List<JobStatus> found, ref int scanned)
    {
        var chunk = new TrackedJob[Math.Min(CopyChunk, query.ScanLimit)];
        while (found.Count < query.Limit)
        {
            if (scanned >= query.ScanLimit)
            {
                return HasLiveBefore(before) ? new JobCursor(Ended: false, before).ToString() : null;
            }

            int copied = CopyLiveBefore(before, chunk.AsSpan(0, Math.Min(chunk.Length, query.ScanLimit - scanned)));
            if (copied == 0)
            {
                return null;
            }

            for (int i = 0; i < copied && found.Count < query.Limit; i++)
            {
                var job = chunk[i];
                scanned++;
                before = job.TrackSequence;

                // A job that ended is listed among the ended jobs, not here.
                if (!job.IsGone && (states & (1 << (int)job.State)) != 0 && Matches(job, query))
                {
                    found.Add(job.Describe(queueName));
                }
            }
        }

        return HasLiveBefore(before) ? new JobCursor(Ended: false, before).ToString() : null;
    }

    /// <summary>Copies the entries accepted latest before <paramref name="before"/>, latest first.</summary>
    private int CopyLiveBefore(long before, Span<TrackedJob> into)
    {
        lock (_liveLock)
        {
            CompactLiveIfMostlyGoneLocked();
            int next = _live.CountBefore(before) - 1;
            int copied = 0;
            while (copied < into.Length && next >= 0)
            {
                into[copied++] = _live[next--];
            }

            return copied;
        }
    }

    private bool HasLiveBefore(long before)
    {
        lock (_liveLock)
        {
            return _live.Count > 0 && _live[0].TrackSequence < before;
        }
    }

    /// <summary>
    /// Adds ended jobs that ended before <paramref name="before"/>, latest first, until the page is full or, with a text
    /// filter, <see cref="JobQuery.ScanLimit"/> jobs were read.
    /// </summary>
    /// <returns>The cursor to continue among ended jobs, or <see langword="null"/> when none is left to read.</returns>
    private string? FindEnded(JobQuery query, int states, long before, string queueName, List<JobStatus> found, ref int scanned)
    {
        // The scan limit is the page's: what the jobs in flight used of it is gone. A state filter alone reads its index.
        bool hasText = query.NameContains is not null || query.ErrorContains is not null;
        var logs = SelectLogs(states);
        var chunk = new TrackedJob[Math.Min(CopyChunk, hasText ? query.ScanLimit : query.Limit)];
        while (found.Count < query.Limit && (!hasText || scanned < query.ScanLimit))
        {
            int want = Math.Min(chunk.Length, hasText ? query.ScanLimit - scanned : query.Limit - found.Count);
            int copied = CopyBefore(logs, before, chunk.AsSpan(0, want));
            if (copied == 0)
            {
                return null;
            }

            for (int i = 0; i < copied && found.Count < query.Limit; i++)
            {
                var job = chunk[i];
                scanned++;
                before = job.EndSequence;
                if (Matches(job, query))
                {
                    found.Add(job.Describe(queueName));
                }
            }
        }

        return HasBefore(logs, before) ? new JobCursor(Ended: true, before).ToString() : null;
    }

    private EndedLog[] SelectLogs(int states)
    {
        if (states == EndedStates)
        {
            return [_ended];
        }

        var logs = new List<EndedLog>(EndingCount);
        for (int state = FirstEnding; state <= (int)JobState.Abandoned; state++)
        {
            if ((states & (1 << state)) != 0)
            {
                logs.Add(_endedByState[state - FirstEnding]);
            }
        }

        return [.. logs];
    }

    /// <summary>Copies the jobs that ended latest before <paramref name="before"/> from the logs, merged, latest first.</summary>
    private int CopyBefore(EndedLog[] logs, long before, Span<TrackedJob> into)
    {
        Span<int> next = stackalloc int[EndingCount];
        lock (_endedLock)
        {
            PruneLocked();
            for (int i = 0; i < logs.Length; i++)
            {
                next[i] = logs[i].CountBefore(before) - 1;
            }

            int copied = 0;
            while (copied < into.Length)
            {
                int best = -1;
                long bestSequence = long.MinValue;
                for (int i = 0; i < logs.Length; i++)
                {
                    if (next[i] >= 0 && logs[i][next[i]].EndSequence > bestSequence)
                    {
                        best = i;
                        bestSequence = logs[i][next[i]].EndSequence;
                    }
                }

                if (best < 0)
                {
                    break;
                }

                into[copied++] = logs[best][next[best]--];
            }

            Debug.Assert(copied == 0 || into[0].EndSequence < before, "Only jobs that ended before the cursor are copied.");
            return copied;
        }
    }

    private bool HasBefore(EndedLog[] logs, long before)
    {
        lock (_endedLock)
        {
            foreach (var log in logs)
            {
                if (log.Count > 0 && log[0].EndSequence < before)
                {
                    return true;
                }
            }

            return false;
        }
    }
}
