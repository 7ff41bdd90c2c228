namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The Redis ACL a durable queue's connection needs, and no more: every key under the queues' prefix, the queues'
/// notification channels, and exactly the commands the queue sends (outside its scripts and inside them: Redis checks a
/// script's calls against the user who called it), as docs/durable.md gives them to copy. <see cref="Probes"/> lists
/// one use of each command, on the queue's own keys and channels, for <c>checkAccess.lua</c> to ask Redis whether the
/// connection's user may run it (without running it).
/// </summary>
internal static class DurableAcl
{
    /// <summary>The commands a durable queue sends, as ACL rules, in the order the docs list them.</summary>
    public static readonly IReadOnlyList<string> Commands =
    [
        // StackExchange.Redis's connection (it selects the database inside each MULTI too), its look at the topology
        // (refused, it takes the server for a standalone one; needed on Redis Cluster), and the warm-up's PING.
        "+ping", "+echo", "+select", "+client|setname", "+client|id", "+cluster|nodes", "+cluster|slots",

        // The scripts, loaded and called by hash or by text; the round and its read in one MULTI/EXEC.
        "+eval", "+evalsha", "+script|load", "+multi", "+exec",

        // Enqueue notifications and cancels by id.
        "+publish", "+subscribe", "+unsubscribe",

        // The queue's streams.
        "+xadd", "+xack", "+xautoclaim", "+xclaim", "+xdel", "+xgroup|create", "+xgroup|delconsumer", "+xinfo|consumers",
        "+xinfo|groups", "+xinfo|stream", "+xlen", "+xpending", "+xrange", "+xreadgroup", "+xrevrange", "+xsetid", "+xtrim",

        // Idempotency keys, job records and pointers, the scheduled-job counter.
        "+get", "+set", "+del", "+incr", "+mget", "+type", "+time",

        // Ended records, scheduled jobs, recurring jobs.
        "+hdel", "+hexists", "+hget", "+hlen", "+hmget", "+hscan", "+hset",

        // Retries and scheduled jobs; the lists of ended jobs.
        "+zadd", "+zcard", "+zcount", "+zrange", "+zrangebyscore", "+zrank", "+zrem", "+zremrangebyrank", "+zrevrange",
        "+zrevrank", "+zscore",

        // The startup checks (DurableServerChecks): without it they say they could not run, and the queue works.
        "+info",
    ];

    /// <summary>Gets the key pattern of every queue under <paramref name="prefix"/> (<see cref="DurableQueueOptions.KeyPrefix"/>).</summary>
    public static string KeyPattern(string prefix) => "~" + prefix + ":*";

    /// <summary>Gets the channel pattern of every queue under <paramref name="prefix"/>.</summary>
    public static string ChannelPattern(string prefix) => "&" + prefix + ":*";

    /// <summary>
    /// The key StackExchange.Redis reads at connect (its tie-breaker, read only) and the channel it subscribes to (its
    /// configuration channel): refused, it goes on without them, and Redis logs each refusal.
    /// </summary>
    public const string ClientKeyAndChannel = "%R~__Booksleeve_TieBreak &__Booksleeve_MasterChanged";

    /// <summary>
    /// Gets the rules of the user for the durable queues under <paramref name="prefix"/>, as <c>ACL SETUSER {user} on
    /// &gt;{password} {rules}</c> takes them: the user's keys, channels and commands set to exactly these. Left out:
    /// <c>CONFIG GET</c>, which StackExchange.Redis sends at connect and goes on without, since it would show the
    /// server's passwords (<c>requirepass</c>, <c>masterauth</c>).
    /// </summary>
    public static string Rules(string prefix) =>
        $"resetkeys {KeyPattern(prefix)} resetchannels {ChannelPattern(prefix)} {ClientKeyAndChannel} -@all {string.Join(' ', Commands)}";

    /// <summary>
    /// Gets one key of each kind <paramref name="keys"/>' queue keeps, for <c>checkAccess.lua</c> to declare: Redis
    /// refuses a script whose declared keys its caller may not reach.
    /// </summary>
    public static IReadOnlyList<string> AccessKeys(RedisStreamKeys keys) =>
    [
        keys.Stream!, keys.Delayed!, keys.Dead!, keys.Scheduled!, keys.Recurring!, keys.Ids!, keys.Epoch!, keys.Succeeded!,
        keys.DeadLettered!, keys.Canceled!, keys.EndedRecords!, keys.JobRecord("0-1")!, keys.JobLocation("0-1")!,
        keys.IdempotencyKey("k")!,
    ];

    /// <summary>
    /// Gets one use of each command on <paramref name="keys"/>' keys and channels, with the rules that allow it: what
    /// <c>checkAccess.lua</c> asks Redis about. A producer-only instance (<paramref name="consume"/> false) never reads
    /// with <c>XREADGROUP</c> (nor in a <c>MULTI</c>) and never subscribes, so it is not asked about them.
    /// </summary>
    public static IReadOnlyList<AccessProbe> Probes(RedisStreamKeys keys, string prefix, bool consume)
    {
        const string Group = RedisStreamKeys.Group;
        string stream = keys.Stream!;
        string delayed = keys.Delayed!;
        string dead = keys.Dead!;
        string ended = keys.EndedRecords!;
        string succeeded = keys.Succeeded!;
        string job = keys.JobRecord("0-1")!;
        string publish = "+publish " + ChannelPattern(prefix);
        var probes = new List<AccessProbe>
        {
            new("+ping", ["PING"]),
            new("+echo", ["ECHO", "x"]),
            new("+select", ["SELECT", "0"]),
            new("+client|setname", ["CLIENT", "SETNAME", "x"]),
            new("+client|id", ["CLIENT", "ID"]),
            new("+eval", ["EVAL", "return 1", "0"]),
            new("+evalsha", ["EVALSHA", new string('0', 40), "0"]),
            new("+script|load", ["SCRIPT", "LOAD", "return 1"]),
            new(publish, ["PUBLISH", keys.NudgeName, "x"]),
            new(publish, ["PUBLISH", keys.CancelName, "x"]),
            new("+unsubscribe", ["UNSUBSCRIBE", keys.NudgeName]),
            new("+xadd", ["XADD", stream, "*", "p", "x"]),
            new("+xadd", ["XADD", dead, "*", "p", "x"]),
            new("+xack", ["XACK", stream, Group, "0-1"]),
            new("+xautoclaim", ["XAUTOCLAIM", stream, Group, "c", "0", "0-0", "COUNT", "1"]),
            new("+xclaim", ["XCLAIM", stream, Group, "c", "0", "0-1", "JUSTID"]),
            new("+xdel", ["XDEL", dead, "0-1"]),
            new("+xgroup|create", ["XGROUP", "CREATE", stream, Group, "0", "MKSTREAM"]),
            new("+xgroup|delconsumer", ["XGROUP", "DELCONSUMER", stream, Group, "c"]),
            new("+xinfo|consumers", ["XINFO", "CONSUMERS", stream, Group]),
            new("+xinfo|groups", ["XINFO", "GROUPS", stream]),
            new("+xinfo|stream", ["XINFO", "STREAM", stream]),
            new("+xlen", ["XLEN", dead]),
            new("+xpending", ["XPENDING", stream, Group, "-", "+", "1", "c"]),
            new("+xrange", ["XRANGE", stream, "-", "+", "COUNT", "1"]),
            new("+xrevrange", ["XREVRANGE", dead, "+", "-", "COUNT", "1"]),
            new("+xsetid", ["XSETID", stream, "0-1"]),
            new("+xtrim", ["XTRIM", stream, "MINID", "0-1"]),
            new("+get", ["GET", keys.IdempotencyKey("k")!]),
            new("+set", ["SET", job, "x"]),
            new("+del", ["DEL", keys.JobLocation("0-1")!]),
            new("+incr", ["INCR", keys.Ids!]),
            new("+mget", ["MGET", job]),
            new("+type", ["TYPE", keys.Scheduled!]),
            new("+time", ["TIME"]),
            new("+hdel", ["HDEL", ended, "0-1"]),
            new("+hexists", ["HEXISTS", keys.Recurring!, "x"]),
            new("+hget", ["HGET", keys.Recurring!, "x"]),
            new("+hlen", ["HLEN", ended]),
            new("+hmget", ["HMGET", ended, "0-1"]),
            new("+hscan", ["HSCAN", ended, "0"]),
            new("+hset", ["HSET", ended, "0-1", "x"]),
            new("+zadd", ["ZADD", delayed, "1", "x"]),
            new("+zcard", ["ZCARD", delayed]),
            new("+zcount", ["ZCOUNT", keys.DeadLettered!, "-inf", "+inf"]),
            new("+zrange", ["ZRANGE", delayed, "0", "0"]),
            new("+zrangebyscore", ["ZRANGEBYSCORE", delayed, "-inf", "+inf"]),
            new("+zrank", ["ZRANK", succeeded, "x"]),
            new("+zrem", ["ZREM", keys.Canceled!, "x"]),
            new("+zremrangebyrank", ["ZREMRANGEBYRANK", succeeded, "0", "0"]),
            new("+zrevrange", ["ZREVRANGE", succeeded, "0", "0"]),
            new("+zrevrank", ["ZREVRANK", succeeded, "x"]),
            new("+zscore", ["ZSCORE", succeeded, "x"]),
        };
        if (consume)
        {
            probes.Add(new("+multi", ["MULTI"]));
            probes.Add(new("+exec", ["EXEC"]));
            probes.Add(new("+xreadgroup", ["XREADGROUP", "GROUP", Group, "c", "COUNT", "1", "STREAMS", stream, ">"]));
            probes.Add(new("+subscribe " + ChannelPattern(prefix), ["SUBSCRIBE", keys.NudgeName, keys.CancelName]));
        }

        return probes;
    }
}
