using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>The Redis keys and channel of one durable queue. The keys share the hash tag <c>{name}</c>: one slot on Redis Cluster.</summary>
internal sealed class RedisStreamKeys
{
    /// <summary>The consumer group every instance of the queue reads through.</summary>
    public const string Group = "workers";

    private readonly string _keyRoot;

    public RedisStreamKeys(string prefix, string queueName)
    {
        string root = $"{prefix}:{{{queueName.ToLowerInvariant()}}}";
        _keyRoot = root + ":key:";
        Stream = root + ":stream";
        Delayed = root + ":delayed";
        Dead = root + ":dead";
        Scheduled = root + ":scheduled";
        Recurring = root + ":recurring";
        Ids = root + ":ids";
        Epoch = root + ":epoch";
        Nudge = RedisChannel.Literal(root + ":nudge");
        NudgeName = root + ":nudge";
        Cancel = RedisChannel.Literal(root + ":cancel");
        CancelName = root + ":cancel";
        Succeeded = root + ":ended:S";
        DeadLettered = root + ":ended:D";
        Canceled = root + ":ended:C";
        EndedRecords = root + ":ended";
        JobTypes = root + ":types";
        _jobRoot = root + ":job:";
        _atRoot = root + ":at:";
    }

    private readonly string _jobRoot;
    private readonly string _atRoot;

    /// <summary>Gets the stream of unfinished jobs (waiting and pending).</summary>
    public RedisKey Stream { get; }

    /// <summary>Gets the sorted set of jobs waiting for a retry, scored by their due time.</summary>
    public RedisKey Delayed { get; }

    /// <summary>Gets the stream of dead letters.</summary>
    public RedisKey Dead { get; }

    /// <summary>Gets the hash of scheduled jobs that have not come due: job id -> their member of <see cref="Delayed"/> (to cancel or list one).</summary>
    public RedisKey Scheduled { get; }

    /// <summary>Gets the hash of recurring jobs on this queue: recurring job id -> the time (Unix ms) of the latest occurrence any instance enqueued.</summary>
    public RedisKey Recurring { get; }

    /// <summary>Gets the counter that numbers scheduled jobs (their ids, <c>s{ms}-{n}</c>, exist before any stream entry does).</summary>
    public RedisKey Ids { get; }

    /// <summary>
    /// Gets the token written together with the consumer group: Redis losing its data loses both, and the group made
    /// again comes with a new token, which tells a consumer that Redis lost the entries it holds (see <see cref="DurableScripts"/>).
    /// </summary>
    public RedisKey Epoch { get; }

    /// <summary>Gets the channel an enqueue publishes on, so idle consumers fetch at once instead of at their next poll.</summary>
    public RedisChannel Nudge { get; }

    public string NudgeName { get; }

    /// <summary>Gets the channel a cancel by id publishes on (the message is the stream id of the running entry), so the instance that holds it fires its token.</summary>
    public RedisChannel Cancel { get; }

    public string CancelName { get; }

    /// <summary>Gets the sorted set of succeeded job ids, scored by when they ended (Unix ms); trimmed by the retention and the count cap.</summary>
    public RedisKey Succeeded { get; }

    /// <summary>Gets the sorted set of dead-lettered job ids, scored by when they ended.</summary>
    public RedisKey DeadLettered { get; }

    /// <summary>Gets the sorted set of cancelled job ids, scored by when they ended.</summary>
    public RedisKey Canceled { get; }

    /// <summary>
    /// Gets the hash of ended jobs' records (job id -> record, see <see cref="DurableScripts"/>), each listed in
    /// <see cref="Succeeded"/>, <see cref="DeadLettered"/> or <see cref="Canceled"/> and removed with its member by the trim.
    /// </summary>
    public RedisKey EndedRecords { get; }

    /// <summary>
    /// Gets the hash of the job types the queue's consumers run: job type name -> when a consumer that runs it last said
    /// so (Unix ms, Redis's clock as that consumer measured it), written with each heartbeat. An instance that fetches a
    /// job of a type it does not know reads it to decide between handing the job back and dead-lettering it.
    /// </summary>
    public RedisKey JobTypes { get; }

    /// <summary>
    /// Gets the string that records <paramref name="jobId"/> while it lives (see <see cref="DurableScripts"/>): its attempt
    /// history and a cancel asked for. Once it ended, its record is a field of <see cref="EndedRecords"/> (a version before
    /// that wrote it here, with an expiry, and the scripts still read it). The scripts build the same name.
    /// </summary>
    public RedisKey JobRecord(string jobId) => _jobRoot + jobId;

    /// <summary>Gets the string that points from <paramref name="jobId"/> to where the job is now, when that is not its own stream id (a retry, a promotion, a hand-back).</summary>
    public RedisKey JobLocation(string jobId) => _atRoot + jobId;

    /// <summary>
    /// Gets the string that holds <paramref name="idempotencyKey"/>: <c>{job id}|{where}</c> while its job is unfinished
    /// (or retained after a success). The scripts build the same name from <see cref="Stream"/>'s (see <see cref="DurableScripts"/>).
    /// </summary>
    public RedisKey IdempotencyKey(string idempotencyKey) => _keyRoot + idempotencyKey;
}
