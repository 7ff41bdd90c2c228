namespace WorkQueue.DurableChaos;

/// <summary>The durable queue's name and the Redis keys of one chaos run, shared by the controller and its workers.</summary>
internal sealed class ChaosKeys
{
    public const string Queue = "chaos";

    /// <summary>The consumer group the library reads through (RedisStreamKeys.Group).</summary>
    public const string Group = "workers";

    /// <summary>The durable queue of the recurring mode's occurrences, and the recurring job's id.</summary>
    public const string TickQueue = "ticks";

    public const string TickJob = "chaos-tick";

    public ChaosKeys(string prefix)
    {
        Prefix = prefix;
        Runs = $"{prefix}:runs";
        Stream = $"{prefix}:{{{Queue}}}:stream";
        Delayed = $"{prefix}:{{{Queue}}}:delayed";
        Dead = $"{prefix}:{{{Queue}}}:dead";
        TickStarts = $"{prefix}:tick-starts";
        TickRuns = $"{prefix}:tick-runs";
        TickEnds = $"{prefix}:tick-ends";
    }

    public string Prefix { get; }

    /// <summary>Gets the hash of completions: field = job number, value = how many times a handler completed it.</summary>
    public string Runs { get; }

    public string Stream { get; }

    public string Delayed { get; }

    public string Dead { get; }

    /// <summary>Gets the list of recurring-occurrence starts, <c>occurrence-ms|pid</c> (recurring mode).</summary>
    public string TickStarts { get; }

    /// <summary>Gets the hash of recurring occurrences (Unix ms) to the number of completed runs (recurring mode).</summary>
    public string TickRuns { get; }

    /// <summary>Gets the list of completed runs, <c>occurrence-ms|pid</c> (recurring mode).</summary>
    public string TickEnds { get; }
}
