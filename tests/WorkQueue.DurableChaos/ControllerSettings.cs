namespace WorkQueue.DurableChaos;

/// <summary>What <c>controller</c> was asked to do (see <see cref="Program"/> for the options).</summary>
internal sealed class ControllerSettings
{
    public required int Jobs { get; init; }

    public required int Workers { get; init; }

    public required TimeSpan KillInterval { get; init; }

    public required int MinKills { get; init; }

    public required bool RestartRedis { get; init; }

    /// <summary>Gets how long Redis stays down when it is restarted.</summary>
    public required TimeSpan RedisDownTime { get; init; }

    public required int? RedisPort { get; init; }

    public required int Producers { get; init; }

    /// <summary>Gets the total enqueue rate in jobs per second, or 0 for as fast as Redis takes them.</summary>
    public required int Rate { get; init; }

    /// <summary>
    /// Gets a value indicating whether the jobs come in bursts, one per kill interval (rate x interval jobs at once), each
    /// hit by a kill shortly after it starts, so that every kill finds the workers busy with a backlog.
    /// </summary>
    public required bool Bursts { get; init; }

    public required int ClaimTimeoutMs { get; init; }

    public required int HeartbeatMs { get; init; }

    public required TimeSpan Timeout { get; init; }

    public required string Prefix { get; init; }

    public required bool KeepDirectory { get; init; }

    /// <summary>
    /// Gets a value indicating whether Redis is a primary, a replica and three Sentinels (clients connect through the
    /// Sentinels), the primary SIGKILLed for good once half the jobs are in, and the replica promoted.
    /// </summary>
    public required bool Sentinel { get; init; }

    /// <summary>
    /// Gets a value indicating whether Redis is a cluster of three masters and three replicas (clients connect with the
    /// masters' endpoints), the queue's slot moved to another master once half the jobs are in.
    /// </summary>
    public required bool Cluster { get; init; }

    /// <summary>Gets how many keys one <c>MIGRATE</c> of the <c>--cluster</c> slot move carries (<c>redis-cli --cluster reshard</c>'s default pipeline is 10).</summary>
    public required int MigrateBatch { get; init; }

    /// <summary>Gets the producers' <see cref="AspNetCore.DurableQueueOptions.ReplicaAcknowledgements"/> (0: off).</summary>
    public required int ReplicaAcks { get; init; }

    public static ControllerSettings Read(Arguments args)
    {
        var settings = new ControllerSettings
        {
            Jobs = args.Optional("jobs") is null ? throw new ArgumentException("Option --jobs is required.") : args.Int("jobs", 0, min: 1),
            Workers = args.Int("workers", 3, min: 2),
            KillInterval = TimeSpan.FromMilliseconds(args.Int("kill-interval-ms", 3000, min: 100)),
            MinKills = args.Int("min-kills", 0),
            RestartRedis = args.Flag("restart-redis"),
            RedisDownTime = TimeSpan.FromMilliseconds(args.Int("redis-down-ms", 1000)),
            RedisPort = args.Optional("redis-port") is null ? null : args.Int("redis-port", 0, min: 1),
            Producers = args.Int("producers", 8, min: 1),
            Rate = args.Int("rate", 0),
            Bursts = args.Flag("bursts"),
            ClaimTimeoutMs = args.Int("claim-timeout-ms", 2000, min: 1000),
            HeartbeatMs = args.Int("heartbeat-ms", 500, min: 100),
            Timeout = TimeSpan.FromSeconds(args.Int("timeout-s", 600, min: 1)),
            Prefix = args.Optional("prefix") ?? "chaos",
            KeepDirectory = args.Flag("keep-dir"),
            Sentinel = args.Flag("sentinel"),
            ReplicaAcks = args.Int("replica-acks", 0),
            Cluster = args.Flag("cluster"),
            MigrateBatch = args.Int("migrate-batch", 10, min: 1),
        };
        args.ThrowIfUnknown();
        if (settings.Bursts && settings.Rate == 0)
        {
            throw new ArgumentException("Option --bursts needs --rate (each burst is rate x kill interval jobs).");
        }

        if (settings.Sentinel && settings.RestartRedis)
        {
            throw new ArgumentException("Options --sentinel and --restart-redis do not go together (the first kills the primary for good).");
        }

        if (settings.Cluster && (settings.Sentinel || settings.RestartRedis))
        {
            throw new ArgumentException("Option --cluster goes with neither --sentinel nor --restart-redis (one topology, one disruption a run).");
        }

        if (settings.ReplicaAcks > 0 && !settings.Sentinel)
        {
            throw new ArgumentException("Option --replica-acks needs --sentinel (the run's only replicas).");
        }

        return settings;
    }
}
