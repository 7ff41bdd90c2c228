using System.Globalization;
using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/listScheduled.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its
/// reply read (a list of <see cref="ListedScheduledJob"/>), in one place. The job browser (<c>RedisJobBrowser.cs</c>) calls it.
/// </summary>
internal static class ListScheduledCall
{
    /// <summary>Lists up to <paramref name="count"/> scheduled jobs (not retries), soonest first, reading at most <paramref name="scanLimit"/> members of the delayed set.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="count">The most jobs to list.</param>
    /// <param name="scanLimit">The most delayed-set members to read.</param>
    /// <returns>The jobs found, soonest first.</returns>
    public static async Task<ListedScheduledJob[]> RunAsync(IDatabase db, RedisStreamKeys keys, int count, int scanLimit) =>
        Read(await db.ScriptEvaluateAsync(DurableScripts.ListScheduled, Keys(keys), Arguments(count, scanLimit)).ConfigureAwait(false));

    /// <summary>KEYS: delayed, scheduled.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Delayed, keys.Scheduled];

    /// <summary>ARGV: count, scan limit.</summary>
    public static RedisValue[] Arguments(int count, int scanLimit) =>
    [
        count,
        scanLimit,
    ];

    /// <summary>Reads the reply: <c>{ id, due, scheduled at, payload }</c> per job; a time that cannot be read is 0.</summary>
    public static ListedScheduledJob[] Read(RedisResult reply)
    {
        var rows = (RedisResult[])reply!;
        var jobs = new ListedScheduledJob[rows.Length];
        for (int i = 0; i < rows.Length; i++)
        {
            var row = (RedisResult[])rows[i]!;
            _ = long.TryParse((string?)row[1], NumberStyles.Float, CultureInfo.InvariantCulture, out long due);
            _ = long.TryParse((string?)row[2], NumberStyles.None, CultureInfo.InvariantCulture, out long scheduledAt);
            jobs[i] = new ListedScheduledJob((string)row[0]!, due, scheduledAt, (string?)row[3] ?? string.Empty);
        }

        return jobs;
    }
}

/// <summary>A scheduled job as <c>listScheduled.lua</c> lists it.</summary>
/// <param name="JobId">The job's id (<c>s{ms}-{n}</c>).</param>
/// <param name="DueMs">When it is due (Unix ms, its score).</param>
/// <param name="ScheduledAtMs">When it was scheduled (Unix ms).</param>
/// <param name="Payload">Its payload.</param>
internal readonly record struct ListedScheduledJob(string JobId, long DueMs, long ScheduledAtMs, string Payload);
