namespace WorkQueue.DurableChaos;

/// <summary>The options of the <c>recurring</c> command, read once.</summary>
internal sealed class RecurringChaosSettings
{
    public required int Seconds { get; init; }

    public required int Workers { get; init; }

    public required TimeSpan KillInterval { get; init; }

    public required int ClaimTimeoutMs { get; init; }

    public required int HeartbeatMs { get; init; }

    public required TimeSpan Timeout { get; init; }

    public required string Prefix { get; init; }

    public required bool KeepDirectory { get; init; }

    public static RecurringChaosSettings Read(Arguments args)
    {
        var settings = new RecurringChaosSettings
        {
            Seconds = args.Optional("seconds") is null ? throw new ArgumentException("Option --seconds is required.") : args.Int("seconds", 0, min: 5),
            Workers = args.Int("workers", 3, min: 2),
            KillInterval = TimeSpan.FromMilliseconds(args.Int("kill-interval-ms", 3000)),
            ClaimTimeoutMs = args.Int("claim-timeout-ms", 2000, min: 1000),
            HeartbeatMs = args.Int("heartbeat-ms", 500, min: 100),
            Timeout = TimeSpan.FromSeconds(args.Int("timeout-s", 600, min: 1)),
            Prefix = args.Optional("prefix") ?? "chaos",
            KeepDirectory = args.Flag("keep-dir"),
        };
        args.ThrowIfUnknown();
        return settings;
    }
}
