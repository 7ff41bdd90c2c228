using System.ComponentModel.DataAnnotations;
using WorkQueue.Validation;

namespace WorkQueue.AspNetCore;

/// <summary>
/// Configures how a durable queue keeps its jobs in Redis Streams: prefetch, claims and heartbeats, poison messages, keys
/// and the payload's JSON. The engine's settings (threads, concurrency, retries, timeouts, capacity) are the queue's
/// <see cref="WorkQueueOptions"/>, as for any queue.
/// </summary>
/// <remarks>
/// Configuration overrides code, under <c>WorkQueue:Queues:{name}:Durable</c> (the engine's settings under
/// <c>WorkQueue:Queues:{name}</c>).
/// </remarks>
public sealed class DurableQueueOptions
{
    /// <summary>
    /// Gets or sets whether this process runs the queue's jobs. <see langword="false"/> makes it a producer only (a web
    /// front end that enqueues for separate worker services): it fetches nothing and never joins the consumer group.
    /// </summary>
    /// <value>The default value is <see langword="true"/>.</value>
    public bool Consume { get; set; } = true;

    /// <summary>
    /// Gets or sets how many fetched jobs may wait in this process to start. Small keeps a slow instance from hoarding
    /// work that another could run; large saves round trips when jobs are short.
    /// </summary>
    /// <value>The default value is 64.</value>
    [Range(1, 10_000)]
    public int Prefetch { get; set; } = 64;

    /// <summary>
    /// Gets or sets how long a fetched job may go without its consumer's heartbeat before another instance reclaims it
    /// (the consumer crashed or hangs). A job still running keeps its claim alive with heartbeats, however long it runs.
    /// </summary>
    /// <value>The default value is 30 seconds.</value>
    [TimeSpanRange("00:00:01", "1.00:00:00")]
    public TimeSpan ClaimTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// Gets or sets how often this process refreshes the claims of the jobs it holds, and looks for jobs of crashed
    /// consumers to reclaim. At most a third of <see cref="ClaimTimeout"/>.
    /// </summary>
    /// <value>The default value is 10 seconds.</value>
    [TimeSpanRange("00:00:00.100", "12:00:00")]
    public TimeSpan HeartbeatInterval { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Gets or sets how long an idle queue waits before it asks Redis for jobs again when no enqueue notification
    /// arrived (notifications make new jobs start within milliseconds; this is the safety net, and due retries are
    /// fetched at their due time).
    /// </summary>
    /// <value>The default value is 1 second.</value>
    [TimeSpanRange("00:00:00.010", "00:01:00")]
    public TimeSpan PollInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Gets or sets how long a job whose type no consumer of the queue runs waits before it is dead-lettered (reason
    /// <c>unknown-job-type</c>). An instance that fetches a job of a type it does not know (a newer version added it,
    /// during a rolling deploy) never runs it: it hands the job back, unrun, to be fetched again a second later, for as
    /// long as some consumer said within this time that it runs that type (every consumer says so with each heartbeat),
    /// and, when none ever did, until the job is this old.
    /// </summary>
    /// <value>
    /// The default value, <see langword="null"/>, is 15 minutes, or three <see cref="HeartbeatInterval"/>s when that is
    /// longer; a value set must be longer than twice <see cref="HeartbeatInterval"/>.
    /// </value>
    [TimeSpanRange("00:00:01", "7.00:00:00")]
    public TimeSpan? UnknownJobTypeTimeout { get; set; }

    /// <summary>Gets <see cref="UnknownJobTypeTimeout"/>, or its default when it is not set.</summary>
    internal TimeSpan UnknownJobTypeTimeoutOrDefault =>
        UnknownJobTypeTimeout ?? (HeartbeatInterval * 3 > TimeSpan.FromMinutes(15) ? HeartbeatInterval * 3 : TimeSpan.FromMinutes(15));

    /// <summary>
    /// Gets or sets how many times a job may be delivered (fetched, then reclaimed after its consumer died) before it is
    /// treated as poison and dead-lettered instead of crashing instance after instance.
    /// </summary>
    /// <value>The default value is 10.</value>
    [Range(1, 1000)]
    public int MaxDeliveries { get; set; } = 10;

    /// <summary>
    /// Gets or sets the largest payload, in bytes of UTF-8 JSON, that an enqueue (<see cref="IWorkQueue.EnqueueAsync{THandler, TPayload}(TPayload, CancellationToken)"/>)
    /// accepts; a larger one is refused at once with an <see cref="ArgumentException"/> naming the limit and its size, and
    /// never reaches Redis, so it cannot fail the enqueues sent with it. <see langword="null"/>: what Redis takes in one
    /// argument (its <c>proto-max-bulk-len</c>, read with <c>CONFIG GET</c> at connect when the connection allows admin
    /// commands, else Redis's default of 512 MB), less 1 KB for the fields a retry adds. A value above what Redis takes
    /// is lowered to it.
    /// </summary>
    /// <value>The default value is <see langword="null"/>: Redis's limit.</value>
    [Range(1, int.MaxValue)]
    public int? MaxPayloadBytes { get; set; }

    /// <summary>
    /// Gets or sets what the Redis warm-up does when the server this queue uses can lose its jobs or cannot run them:
    /// a <c>maxmemory-policy</c> other than <c>noeviction</c> (Redis evicts keys, jobs among them, when it reaches
    /// <c>maxmemory</c>), <c>appendonly no</c> (a restart loses what was stored since the last snapshot), a version
    /// older than 7.0 (the scripts need it), or a command the queue sends that the connection's user may not run (an
    /// ACL: named with the rules to add). The settings are read with <c>INFO</c>, from a script (so without
    /// StackExchange.Redis's admin mode, and where a managed Redis refuses <c>CONFIG</c>); when Redis refuses that, one
    /// warning says the checks could not run and why, and the queue goes on. The checks run once per queue in the
    /// warm-up of <see cref="Microsoft.Extensions.DependencyInjection.RedisWarmupServiceCollectionExtensions.AddRedisWarmup"/>.
    /// </summary>
    /// <value>The default value is <see cref="RedisServerCheckMode.Warn"/>.</value>
    public RedisServerCheckMode ServerChecks { get; set; } = RedisServerCheckMode.Warn;

    /// <summary>
    /// Gets or sets how many replicas of the Redis primary must confirm they have an enqueued job before
    /// <c>EnqueueAsync</c> (and <c>ScheduleAsync</c>) completes: after each round of enqueues, the store sends Redis's
    /// <c>WAIT</c> with this number and <see cref="ReplicaAcknowledgementTimeout"/>, in the same round trip. Zero (the
    /// default) sends no <c>WAIT</c>: an enqueue completes once the primary has the job, and a failover to a replica that
    /// had not received it loses it.
    /// </summary>
    /// <remarks>
    /// When fewer replicas confirm within the timeout, the job is still stored on the primary and runs, and its producer
    /// gets <see cref="EnqueueNotReplicatedException"/> (never "not stored"). Acknowledgements, retries and dead letters
    /// do not wait: one lost in a failover makes its job run again (at least once), never lost. See docs/durable.md,
    /// "Replica acknowledgements", for what this covers and what it does not.
    /// </remarks>
    /// <value>The default value is 0: no replica acknowledgement is asked.</value>
    [Range(0, 100)]
    public int ReplicaAcknowledgements { get; set; }

    /// <summary>
    /// Gets or sets how long an enqueue waits for <see cref="ReplicaAcknowledgements"/> replicas to confirm they have it
    /// (the <c>WAIT</c>'s timeout). While replicas do not answer, every round of enqueues waits this long, and Redis
    /// answers the commands sent after the <c>WAIT</c> on the same connection only then: at most half of the connection's
    /// shorter timeout (<c>SyncTimeout</c>, <c>AsyncTimeout</c>), checked at startup.
    /// </summary>
    /// <value>The default value is 1 second.</value>
    [TimeSpanRange("00:00:00.001", "00:01:00")]
    public TimeSpan ReplicaAcknowledgementTimeout { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Gets or sets the prefix of the queue's Redis keys. The keys are <c>{prefix}:{{name}}:stream</c>, <c>:delayed</c> and
    /// <c>:dead</c>; the braces make them one hash slot, so the queue works on Redis Cluster.
    /// </summary>
    /// <value>The default value is <c>workqueue</c>.</value>
    [Required]
    [RegularExpression(@"^[^{}\s]+$", ErrorMessage = "The KeyPrefix field must not contain braces or white space.")]
    public string KeyPrefix { get; set; } = "workqueue";
}
