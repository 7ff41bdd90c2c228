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
    }

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

    /// <summary>
    /// Gets the string that holds <paramref name="idempotencyKey"/>: <c>{job id}|{where}</c> while its job is unfinished
    /// (or retained after a success). The scripts build the same name from <see cref="Stream"/>'s (see <see cref="DurableScripts"/>).
    /// </summary>
    public RedisKey IdempotencyKey(string idempotencyKey) => _keyRoot + idempotencyKey;
}
