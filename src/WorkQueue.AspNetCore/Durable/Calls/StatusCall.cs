using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/status.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its reply read
/// (<see cref="StatusReply"/>, which also reads each job of <c>findJobs.lua</c>'s page), in one place. The job browser
/// (<c>RedisJobBrowser.cs</c>) and the model test call it alike.
/// </summary>
internal static class StatusCall
{
    /// <summary>Reads where a job is, by its id or the stream id of a later entry of it, without writing anything.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="jobId">The job's id, or the stream id of an entry of it still in the stream.</param>
    /// <returns>The reply read; <see cref="StatusKind.Unknown"/> when Redis knows no such job.</returns>
    public static async Task<StatusReply> RunAsync(IDatabase db, RedisStreamKeys keys, string jobId) =>
        StatusReply.Read(await db.ScriptEvaluateAsync(DurableScripts.Status, Keys(keys), Arguments(jobId)).ConfigureAwait(false));

    /// <summary>The same call, synchronously: the model test drives the scripts one call at a time.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="jobId">The job's id, or the stream id of an entry of it still in the stream.</param>
    /// <returns>The reply read.</returns>
    public static StatusReply Run(IDatabase db, RedisStreamKeys keys, string jobId) =>
        StatusReply.Read(db.ScriptEvaluate(DurableScripts.Status, Keys(keys), Arguments(jobId)));

    /// <summary>KEYS: stream, delayed, scheduled.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream, keys.Delayed, keys.Scheduled];

    /// <summary>ARGV: group, job id.</summary>
    public static RedisValue[] Arguments(string jobId) =>
    [
        RedisStreamKeys.Group,
        jobId,
    ];
}

/// <summary>Where a job is, as <c>status.lua</c> answers it (and <c>findJobs.lua</c> for each job of a page).</summary>
internal enum StatusKind
{
    /// <summary>Redis knows no such job (or it ended longer ago than the retention): <c>''</c>.</summary>
    Unknown,

    /// <summary>Ended (<c>E</c>): its record says how.</summary>
    Ended,

    /// <summary>Scheduled, not yet due (<c>S</c>).</summary>
    Scheduled,

    /// <summary>Waiting in the delayed set for a retry (<c>R</c>).</summary>
    Retrying,

    /// <summary>Delivered to a consumer, pending there (<c>P</c>).</summary>
    Running,

    /// <summary>In the stream, not yet delivered (<c>Q</c>).</summary>
    Queued,
}

/// <summary>
/// <c>status.lua</c>'s reply, read: the kind, the job's id (the id asked may be a later entry's), its record, and what
/// the kind tells: a member of the delayed set's due time, attempt and first enqueue (<see cref="StatusKind.Scheduled"/>,
/// <see cref="StatusKind.Retrying"/>), or the stream entry the job is in and, delivered, its consumer
/// (<see cref="StatusKind.Queued"/>, <see cref="StatusKind.Running"/>).
/// </summary>
/// <param name="Kind">Where the job is.</param>
/// <param name="JobId">The job's own id; <see langword="null"/> when unknown.</param>
/// <param name="Record">The job's record (state <c>\0</c> when it has none).</param>
/// <param name="Due">Scheduled or retrying: when the member is due (its score).</param>
/// <param name="Attempt">Scheduled or retrying: the attempt the member is (1 otherwise).</param>
/// <param name="EnqueuedAt">Scheduled or retrying: when the job was first enqueued (the Unix epoch otherwise).</param>
/// <param name="Entry">Queued or running: the stream entry the job is in (its payload left out by <c>findJobs.lua</c>).</param>
/// <param name="Consumer">Running: the consumer the entry is pending for.</param>
/// <param name="IdleMs">Running: the ms since that consumer last claimed the entry.</param>
/// <param name="MemberJobType">Scheduled or retrying: the job type's name the member's payload carries (<see langword="null"/>: the queue's default type).</param>
internal readonly record struct StatusReply(
    StatusKind Kind, string? JobId, JobRecord Record, DateTimeOffset? Due, int Attempt, DateTimeOffset EnqueuedAt, DurableEntry? Entry, string? Consumer, long IdleMs, string? MemberJobType = null)
{
    /// <summary>Gets the job type's name wherever the job is (<see langword="null"/>: the queue's default type, see <see cref="JobTypeEnvelope"/>).</summary>
    public string? JobType => Kind switch
    {
        StatusKind.Ended => Record.JobType,
        StatusKind.Scheduled or StatusKind.Retrying => MemberJobType,
        _ => Entry?.JobType,
    };

    /// <summary>Reads a reply of <c>status.lua</c>: every answer but the unknown one (<c>{ '' }</c>) ends with the job's id.</summary>
    public static StatusReply Read(RedisResult reply)
    {
        var parts = (RedisResult[])reply!;
        return parts.Length > 1 ? Read((string)parts[^1]!, parts) : Of(StatusKind.Unknown, null, JobRecord.Parse(null));
    }

    /// <summary>Reads a status of job <paramref name="jobId"/>: the kind letter, the record, then what the kind tells, by position.</summary>
    public static StatusReply Read(string jobId, ReadOnlySpan<RedisResult> reply)
    {
        var record = JobRecord.Parse((string?)reply[1]);
        switch ((string?)reply[0])
        {
            case "E":
                return Of(StatusKind.Ended, jobId, record);
            case "S":
            case "R":
                // { kind, record, due, attempt, enqueued at, job type }
                return Of((string?)reply[0] == "S" ? StatusKind.Scheduled : StatusKind.Retrying, jobId, record) with
                {
                    Due = JobRecord.ReadTime((string?)reply[2]),
                    Attempt = JobRecord.ReadAttempt((string?)reply[3]),
                    EnqueuedAt = JobRecord.ReadTime((string?)reply[4]) ?? DateTimeOffset.UnixEpoch,
                    MemberJobType = reply.Length > 5 && !reply[5].IsNull && ((string?)reply[5])!.Length > 0 ? (string?)reply[5] : null,
                };
            case "Q":
                // { kind, record, stream id, fields }
                return Of(StatusKind.Queued, jobId, record) with { Entry = DurableEntry.Parse((string)reply[2]!, reply[3], deliveries: 1) };
            case "P":
                // { kind, record, stream id, fields, consumer, ms since its consumer last claimed it, deliveries }
                return Of(StatusKind.Running, jobId, record) with
                {
                    Entry = DurableEntry.Parse((string)reply[2]!, reply[3], deliveries: (long)reply[6]),
                    Consumer = (string?)reply[4],
                    IdleMs = (long)reply[5],
                };
            default:
                return Of(StatusKind.Unknown, null, record);
        }
    }

    private static StatusReply Of(StatusKind kind, string? jobId, JobRecord record) =>
        new(kind, jobId, record, null, 1, DateTimeOffset.UnixEpoch, null, null, 0);
}
