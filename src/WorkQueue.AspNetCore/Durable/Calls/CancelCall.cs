using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/cancel.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its reply read
/// (<see cref="CancelReply"/>), in one place. The job browser (<c>RedisJobBrowser.cs</c>) and the model test call it alike.
/// </summary>
internal static class CancelCall
{
    /// <summary>How long a cancel asked of a running job stays marked when the job had no record yet: longer than any sane run.</summary>
    public static readonly TimeSpan MarkLifetime = TimeSpan.FromDays(1);

    /// <summary>Cancels a job by id, or by the stream id of a later entry of it (a retry's, a hand-back's) while that entry is in the stream.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="jobId">The id asked.</param>
    /// <param name="finishedRetentionMs">How long an ended job's record is kept (0: none).</param>
    /// <param name="scheduledOnly">Whether to cancel only a scheduled job that has not come due.</param>
    /// <returns>The reply read.</returns>
    public static async Task<CancelReply> RunAsync(IDatabase db, RedisStreamKeys keys, string jobId, long finishedRetentionMs, bool scheduledOnly) =>
        CancelReply.Read(await db.ScriptEvaluateAsync(DurableScripts.Cancel, Keys(keys), Arguments(keys, jobId, finishedRetentionMs, scheduledOnly)).ConfigureAwait(false));

    /// <summary>The same call, synchronously: the model test drives the scripts one call at a time.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="jobId">The id asked.</param>
    /// <param name="finishedRetentionMs">How long an ended job's record is kept (0: none).</param>
    /// <param name="scheduledOnly">Whether to cancel only a scheduled job that has not come due.</param>
    /// <returns>The reply read.</returns>
    public static CancelReply Run(IDatabase db, RedisStreamKeys keys, string jobId, long finishedRetentionMs, bool scheduledOnly) =>
        CancelReply.Read(db.ScriptEvaluate(DurableScripts.Cancel, Keys(keys), Arguments(keys, jobId, finishedRetentionMs, scheduledOnly)));

    /// <summary>KEYS: stream, delayed, scheduled.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream, keys.Delayed, keys.Scheduled];

    /// <summary>ARGV: group, job id, finished-job retention ms, 1 for a scheduled job only (else 0), cancel channel, how long a cancel mark is kept (ms).</summary>
    public static RedisValue[] Arguments(RedisStreamKeys keys, string jobId, long finishedRetentionMs, bool scheduledOnly) =>
    [
        RedisStreamKeys.Group,
        jobId,
        finishedRetentionMs,
        scheduledOnly ? 1 : 0,
        keys.CancelName,
        (long)MarkLifetime.TotalMilliseconds,
    ];
}

/// <summary>
/// <c>cancel.lua</c>'s reply, read: <c>{ 1, job }</c> cancelled, <c>{ 2, consumer, job }</c> asked of the consumer that
/// holds it, <c>{ 3, job }</c> already ended, <c>{ 0 }</c> unknown.
/// </summary>
/// <param name="Code">The script's code, 0 to 3.</param>
/// <param name="Consumer">Asked (<c>2</c>): the consumer that holds the job's entry.</param>
/// <param name="JobId">The job's own id (the id asked may be a later entry's); <see langword="null"/> when unknown.</param>
internal readonly record struct CancelReply(long Code, string? Consumer, string? JobId)
{
    /// <summary>Gets the outcome the code stands for (any other code reads as not found).</summary>
    public JobCancelOutcome Outcome => Code switch
    {
        1 => JobCancelOutcome.Canceled,
        2 => JobCancelOutcome.CancelRequested,
        3 => JobCancelOutcome.AlreadyFinished,
        _ => JobCancelOutcome.NotFound,
    };

    /// <summary>Reads a reply of <c>cancel.lua</c>.</summary>
    public static CancelReply Read(RedisResult reply)
    {
        var parts = (RedisResult[])reply!;
        long code = (long)parts[0];
        return code switch
        {
            1 or 3 => new CancelReply(code, null, (string?)parts[1]),
            2 => new CancelReply(code, (string?)parts[1], (string?)parts[2]),
            _ => new CancelReply(code, null, null),
        };
    }
}
