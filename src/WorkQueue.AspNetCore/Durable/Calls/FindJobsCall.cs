using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/findJobs.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its reply
/// read (<see cref="FindJobsReply"/>), in one place. The job browser (<c>RedisJobBrowser.Search.cs</c>) calls it once
/// per part of a page.
/// </summary>
internal static class FindJobsCall
{
    /// <summary>Reads the next part of a search page, from the cursor on; reads only.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="phases">The sources to read, in the order <c>L</c>, <c>Z</c>, <c>S</c>, <c>D</c>, <c>C</c>.</param>
    /// <param name="live">The live kinds wanted (a subset of <c>QPSR</c>).</param>
    /// <param name="cursorPhase">The cursor's source (<c>''</c> to start).</param>
    /// <param name="cursorPosition">The cursor's position in it (<c>''</c> for its start).</param>
    /// <param name="cursorMember">The job id read last at that score (<c>''</c> in the stream).</param>
    /// <param name="limit">The most jobs to return.</param>
    /// <param name="scanLimit">The most entries to examine (the script holds to 256 at most).</param>
    /// <param name="error">The text to find in a job's last error, ASCII letters lowered (<c>''</c> for any).</param>
    /// <param name="byteBudget">The bytes to read before stopping.</param>
    /// <param name="jobType">The text to find in a job's type name, ASCII letters lowered (<c>''</c> for any).</param>
    /// <param name="defaultType">The queue's default job type's name, ASCII letters lowered (<c>''</c> for none).</param>
    /// <returns>The reply read.</returns>
    public static async Task<FindJobsReply> RunAsync(
        IDatabase db, RedisStreamKeys keys, string phases, string live, string cursorPhase, string cursorPosition, string cursorMember, int limit, int scanLimit, string error, int byteBudget, string jobType = "", string defaultType = "") =>
        FindJobsReply.Read(await db.ScriptEvaluateAsync(
            DurableScripts.FindJobs,
            Keys(keys),
            Arguments(phases, live, cursorPhase, cursorPosition, cursorMember, limit, scanLimit, error, byteBudget, jobType, defaultType)).ConfigureAwait(false));

    /// <summary>KEYS: stream, delayed, scheduled.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream, keys.Delayed, keys.Scheduled];

    /// <summary>ARGV: group, phases, live kinds, cursor phase, cursor position, cursor member, limit, scan limit, error text, byte budget, job type text, default job type.</summary>
    public static RedisValue[] Arguments(string phases, string live, string cursorPhase, string cursorPosition, string cursorMember, int limit, int scanLimit, string error, int byteBudget, string jobType = "", string defaultType = "") =>
    [
        RedisStreamKeys.Group,
        phases,
        live,
        cursorPhase,
        cursorPosition,
        cursorMember,
        limit,
        scanLimit,
        error,
        byteBudget,
        jobType,
        defaultType,
    ];
}

/// <summary>
/// <c>findJobs.lua</c>'s reply, read: <c>{ jobs, next phase, next position, next member, scanned, bytes read }</c>, each
/// job <c>{ job id, then its reply as status.lua gives it }</c> (a stream entry's fields without its payload).
/// </summary>
/// <param name="Jobs">The jobs found, each read as <see cref="StatusCall"/>'s reply.</param>
/// <param name="NextPhase">Where the call stopped: its source (<c>''</c> when the search is done).</param>
/// <param name="NextPosition">Its position in that source.</param>
/// <param name="NextMember">The job id read last at that score (<c>''</c> in the stream).</param>
/// <param name="Scanned">The entries the call examined.</param>
/// <param name="Bytes">The bytes the call read.</param>
internal readonly record struct FindJobsReply(StatusReply[] Jobs, string NextPhase, string NextPosition, string NextMember, int Scanned, long Bytes)
{
    /// <summary>Reads a reply of <c>findJobs.lua</c>.</summary>
    public static FindJobsReply Read(RedisResult reply)
    {
        var parts = (RedisResult[])reply!;
        var found = (RedisResult[])parts[0]!;
        var jobs = new StatusReply[found.Length];
        for (int i = 0; i < found.Length; i++)
        {
            var job = (RedisResult[])found[i]!;
            jobs[i] = StatusReply.Read((string)job[0]!, job.AsSpan(1));
        }

        return new FindJobsReply(
            jobs,
            (string?)parts[1] ?? string.Empty,
            (string?)parts[2] ?? string.Empty,
            (string?)parts[3] ?? string.Empty,
            (int)(long)parts[4],
            (long)parts[5]);
    }
}
