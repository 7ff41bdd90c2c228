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
    /// Adds the jobs in flight below <paramref name="before"/>, newest id first, up to the limit.
    /// </summary>
    /// <returns>The cursor to continue among jobs in flight, or <see langword="null"/> when they are all listed.</returns>
    private string? FindLive(JobQuery query, int states, long before, string queueName, List<JobStatus> found, ref int scanned)
    {
        // Jobs in flight are bounded by the queue's capacity, its scheduled jobs and its retries; they are read in full,
        // and only the page's worth (plus one, to know whether more follow) is kept.
        var page = new PriorityQueue<TrackedJob, long>(query.Limit + 1);
        foreach (var (id, job) in _live)
        {
            scanned++;
            if (id >= before || (states & (1 << (int)job.State)) == 0 || !Matches(job, query))
            {
                continue;
            }

            // A min-heap on id: the smallest is dropped once the page is one over its limit.
            page.Enqueue(job, id);
            if (page.Count > query.Limit + 1)
            {
                page.Dequeue();
            }
        }

        bool more = page.Count > query.Limit;
        if (more)
        {
            page.Dequeue();
        }

        var newestFirst = new TrackedJob[page.Count];
        for (int i = newestFirst.Length - 1; i >= 0; i--)
        {
            newestFirst[i] = page.Dequeue();
        }

        foreach (var job in newestFirst)
        {
            found.Add(job.Describe(queueName));
        }

        return more ? new JobCursor(Ended: false, newestFirst[^1].Id).ToString() : null;
    }

    /// <summary>
    /// Adds ended jobs that ended before <paramref name="before"/>, latest first, until the page is full or, with a text
    /// filter, <see cref="JobQuery.ScanLimit"/> jobs were read.
    /// </summary>
    /// <returns>The cursor to continue among ended jobs, or <see langword="null"/> when none is left to read.</returns>
    private string? FindEnded(JobQuery query, int states, long before, string queueName, List<JobStatus> found, ref int scanned)
    {
        bool hasText = query.NameContains is not null || query.ErrorContains is not null;
        var logs = SelectLogs(states);
        var chunk = new TrackedJob[Math.Min(CopyChunk, hasText ? query.ScanLimit : query.Limit)];
        int read = 0;
        while (found.Count < query.Limit && (!hasText || read < query.ScanLimit))
        {
            int want = Math.Min(chunk.Length, hasText ? query.ScanLimit - read : query.Limit - found.Count);
            int copied = CopyBefore(logs, before, chunk.AsSpan(0, want));
            if (copied == 0)
            {
                return null;
            }

            for (int i = 0; i < copied && found.Count < query.Limit; i++)
            {
                var job = chunk[i];
                read++;
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
