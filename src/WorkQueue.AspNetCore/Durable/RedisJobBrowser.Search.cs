using System.Globalization;
using WorkQueue.AspNetCore.Durable.Calls;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The job search of a durable queue, read from Redis in script calls of a few milliseconds each
/// (<see cref="DurableScripts.FindJobs"/>): queued and running jobs from the stream (newest first), scheduled and
/// retrying ones from the delayed set (soonest first), then the ended lists (succeeded, dead-lettered, cancelled; newest
/// first). A page's cursor is where its last call stopped (a seek), checked here before Redis sees it.
/// </summary>
internal sealed partial class RedisJobBrowser
{
    /// <summary>The most entries one search script call examines (findJobs.lua holds to it too): a call takes a few ms of Redis's time.</summary>
    internal const int SearchCallEntries = 256;

    /// <summary>
    /// The bytes one search script call reads (entries with their payloads, members, records) before it stops; the entry
    /// that passes it is its last. Payloads are read one entry at a time, and never returned.
    /// </summary>
    internal const int SearchCallBytes = 1 << 20;

    /// <summary>How many searches of this queue run at once in this process; more wait (the API) or are refused (the admin route).</summary>
    internal const int MaxConcurrentSearches = 2;

    private const string PhaseOrder = "LZSDC";

    /// <summary>The latest score a cursor can hold: a time in Unix ms, as late as DateTimeOffset goes (what the scripts write).</summary>
    private static readonly long MaxCursorScore = DateTimeOffset.MaxValue.ToUnixTimeMilliseconds();

    private readonly SemaphoreSlim _searches = new(MaxConcurrentSearches, MaxConcurrentSearches);

    /// <summary>
    /// Finds a page of this queue's jobs in the given states (all when empty) whose job type's name contains
    /// <paramref name="nameContains"/> and whose last error contains <paramref name="errorContains"/> (both ASCII
    /// case-insensitive), starting after <paramref name="cursor"/>; at most
    /// <paramref name="scanLimit"/> entries are examined, and the page's cursor says where it stopped. At most
    /// <see cref="MaxConcurrentSearches"/> run at once: with <paramref name="wait"/> a search waits for its turn, else it
    /// answers <see langword="null"/> when none is free.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="cursor"/> is not one a page returned.</exception>
    public async Task<JobPage?> FindJobsAsync(
        IReadOnlyCollection<JobState>? states, string? nameContains, string? errorContains, string? cursor, int limit, int scanLimit, bool wait, CancellationToken cancellationToken)
    {
        if (!TryParseCursor(cursor, out string phase, out string position, out string member))
        {
            throw new ArgumentException($"'{cursor}' is not a cursor a durable job page returned.", nameof(cursor));
        }

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
            return new JobPage([], null, 0);
        }

        // Each search holds Redis for a few ms per call and a page can take hundreds of calls: a dashboard left
        // open in many tabs, or a script hammering the route, must not turn that into Redis's whole time.
        if (wait)
        {
            await _searches.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        else if (!_searches.Wait(0, CancellationToken.None))
        {
            return null;
        }

        try
        {
            var jobs = new List<JobStatus>();
            string error = errorContains is null ? string.Empty : AsciiLower(errorContains);
            string jobType = nameContains is null ? string.Empty : AsciiLower(nameContains);
            string defaultType = _types.Default is { } type ? AsciiLower(type.Name) : string.Empty;
            int scanned = 0;
            while (true)
            {
                cancellationToken.ThrowIfCancellationRequested();

                // A script holds Redis while it runs: a page is read in calls of a few ms each (other clients are served
                // between them), each one a seek from where the last stopped.
                var reply = await FindJobsCall.RunAsync(
                    Database, _keys, phases, live, phase, position, member, limit - jobs.Count, Math.Min(SearchCallEntries, scanLimit - scanned), error, SearchCallBytes, jobType, defaultType).ConfigureAwait(false);
                foreach (var found in reply.Jobs)
                {
                    if (ToStatus(found) is { } job)
                    {
                        jobs.Add(job);
                    }
                }

                scanned += reply.Scanned;
                phase = reply.NextPhase;
                position = reply.NextPosition;
                member = reply.NextMember;
                if (phase.Length == 0)
                {
                    return new JobPage(jobs, null, scanned);
                }

                if (jobs.Count >= limit || scanned >= scanLimit)
                {
                    return new JobPage(jobs, FormatCursor(phase, position, member), scanned);
                }
            }
        }
        finally
        {
            _searches.Release();
        }
    }

    /// <summary>Takes a search's turn, if one is free (see <see cref="MaxConcurrentSearches"/>); tests hold them to see a search wait or be refused.</summary>
    internal bool TryEnterSearch() => _searches.Wait(0, CancellationToken.None);

    /// <summary>Gives back a turn <see cref="TryEnterSearch"/> took.</summary>
    internal void ExitSearch() => _searches.Release();

    /// <summary>Lowers ASCII letters only, as Lua's <c>string.lower</c> does to the records: other letters match exactly.</summary>
    private static string AsciiLower(string text) =>
        string.Create(text.Length, text, static (span, source) =>
        {
            for (int i = 0; i < source.Length; i++)
            {
                span[i] = char.IsAsciiLetterUpper(source[i]) ? (char)(source[i] | 0x20) : source[i];
            }
        });

    /// <summary>
    /// Whether <paramref name="cursor"/> has the form of a durable search cursor: a source letter alone (its start),
    /// <c>L:{stream id}</c> (the last entry read), or <c>{Z|S|D|C}:{score}:{job id}</c> (the last member read).
    /// </summary>
    internal static bool IsSearchCursor(string? cursor) => TryParseCursor(cursor, out _, out _, out _);

    private static string FormatCursor(string phase, string position, string member) =>
        position.Length == 0 ? phase : member.Length == 0 ? $"{phase}:{position}" : $"{phase}:{position}:{member}";

    /// <summary>
    /// Reads a cursor as the scripts wrote it: a stream id and a job id as Redis and the queue write them
    /// (<see cref="StreamIdGrammar"/>: two unsigned 64-bit numbers without sign or leading zeros; <c>s</c> first for a
    /// scheduled job's), a score of digits up to <see cref="MaxCursorScore"/>. Nothing else reaches Redis, so a
    /// malformed cursor is the caller's error rather than Redis's.
    /// </summary>
    private static bool TryParseCursor(string? cursor, out string phase, out string position, out string member)
    {
        phase = position = member = string.Empty;
        if (cursor is null)
        {
            return true;
        }

        if (cursor.Length is 0 or > 128 || !PhaseOrder.Contains(cursor[0], StringComparison.Ordinal))
        {
            return false;
        }

        string[] parts = cursor.Split(':');
        if (parts[0].Length != 1)
        {
            return false;
        }

        bool valid = parts.Length switch
        {
            1 => true,
            2 => parts[0] == "L" && StreamIdGrammar.IsStreamId(parts[1]),
            3 => parts[0] != "L" && IsScore(parts[1]) && StreamIdGrammar.IsJobId(parts[2]),
            _ => false,
        };
        if (!valid)
        {
            return false;
        }

        phase = parts[0];
        position = parts.Length > 1 ? parts[1] : string.Empty;
        member = parts.Length > 2 ? parts[2] : string.Empty;
        return true;

        static bool IsScore(string text) =>
            text.Length is > 0 and <= 15 && long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out long score) && score <= MaxCursorScore;
    }
}
