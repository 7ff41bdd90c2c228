using System.Globalization;
using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The job search of a durable queue, read from Redis in one script call per page (<see cref="DurableScripts.FindJobs"/>):
/// queued and running jobs from the stream (newest first), scheduled and retrying ones from the delayed set (soonest
/// first), then the ended lists (succeeded, dead-lettered, cancelled; newest first), records fetched with one MGET per batch.
/// </summary>
internal sealed partial class RedisStreamStore
{
    private const string PhaseOrder = "LZSDC";

    /// <summary>The most entries one search script call reads.</summary>
    private const int ScanChunk = 10_000;

    /// <summary>
    /// Finds a page of this queue's jobs in the given states (all when empty) whose last error contains
    /// <paramref name="errorContains"/> (ASCII case-insensitive), starting after <paramref name="cursor"/>; at most
    /// <paramref name="scanLimit"/> entries are examined, and the page's cursor says where it stopped.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="cursor"/> is not one a page returned.</exception>
    public async Task<DurableJobPage> FindJobsAsync(IReadOnlyCollection<JobState>? states, string? errorContains, string? cursor, int limit, int scanLimit)
    {
        var (phase, position, skip) = ParseCursor(cursor);
        bool all = states is null || states.Count == 0;
        bool Wants(JobState s) => all || states!.Contains(s);
        string phases = string.Concat(
            Wants(JobState.Queued) || Wants(JobState.Running) ? "L" : string.Empty,
            Wants(JobState.Scheduled) || Wants(JobState.Retrying) ? "Z" : string.Empty,
            Wants(JobState.Succeeded) ? "S" : string.Empty,
            Wants(JobState.DeadLettered) ? "D" : string.Empty,
            Wants(JobState.Canceled) ? "C" : string.Empty);
        string live = string.Concat(
            Wants(JobState.Queued) ? "Q" : string.Empty,
            Wants(JobState.Running) ? "P" : string.Empty,
            Wants(JobState.Scheduled) ? "S" : string.Empty,
            Wants(JobState.Retrying) ? "R" : string.Empty);
        if (phases.Length == 0)
        {
            return new DurableJobPage([], null, 0);
        }

        var jobs = new List<DurableJobStatus>();
        string error = errorContains is null ? string.Empty : AsciiLower(errorContains);
        int scanned = 0;
        while (true)
        {
            // A script holds Redis while it runs: a long scan is cut into calls of at most ScanChunk entries.
            int chunk = Math.Min(ScanChunk, scanLimit - scanned);
            var reply = (RedisResult[])(await Database.ScriptEvaluateAsync(
                DurableScripts.FindJobs,
                [Keys.Stream, Keys.Delayed, Keys.Scheduled],
                [RedisStreamKeys.Group, phases, live, phase, position, skip, limit - jobs.Count, chunk, error]).ConfigureAwait(false))!;
            foreach (RedisResult item in (RedisResult[])reply[0]!)
            {
                var parts = (RedisResult[])item!;
                if (ToStatus((string)parts[0]!, parts[1..]) is { } job)
                {
                    jobs.Add(job);
                }
            }

            scanned += (int)(long)reply[4];
            phase = (string?)reply[1] ?? string.Empty;
            position = (string?)reply[2] ?? string.Empty;
            skip = (long)reply[3];
            if (phase.Length == 0)
            {
                return new DurableJobPage(jobs, null, scanned);
            }

            if (jobs.Count >= limit || scanned >= scanLimit)
            {
                return new DurableJobPage(jobs, string.Create(CultureInfo.InvariantCulture, $"{phase}:{position}:{skip}"), scanned);
            }
        }
    }

    /// <summary>Lowers ASCII letters only, as Lua's <c>string.lower</c> does to the records: other letters match exactly.</summary>
    private static string AsciiLower(string text) =>
        string.Create(text.Length, text, static (span, source) =>
        {
            for (int i = 0; i < source.Length; i++)
            {
                span[i] = char.IsAsciiLetterUpper(source[i]) ? (char)(source[i] | 0x20) : source[i];
            }
        });

    /// <summary>Whether <paramref name="cursor"/> has the form of a durable search cursor (<c>{phase}:{position}:{skip}</c>).</summary>
    internal static bool IsSearchCursor(string? cursor)
    {
        try
        {
            _ = ParseCursor(cursor);
            return true;
        }
        catch (ArgumentException)
        {
            return false;
        }
    }

    private static (string Phase, string Position, long Skip) ParseCursor(string? cursor)
    {
        if (cursor is null)
        {
            return (string.Empty, string.Empty, 0);
        }

        string[] parts = cursor.Split(':');
        if (parts.Length == 3 && parts[0].Length == 1 && PhaseOrder.Contains(parts[0][0], StringComparison.Ordinal)
            && parts[1].Length <= 48 && IsPosition(parts[1])
            && long.TryParse(parts[2], NumberStyles.None, CultureInfo.InvariantCulture, out long skip))
        {
            return (parts[0], parts[1], skip);
        }

        throw new ArgumentException($"'{cursor}' is not a cursor a durable job page returned.", nameof(cursor));

        static bool IsPosition(string text)
        {
            foreach (char c in text)
            {
                if (c is not ((>= '0' and <= '9') or '-' or '.' or 'e' or '+'))
                {
                    return false;
                }
            }

            return true;
        }
    }
}
