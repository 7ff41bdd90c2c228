namespace WorkQueue.DurableChaos;

/// <summary>The durable queue's name and the Redis keys of one chaos run, shared by the controller and its workers.</summary>
internal sealed class ChaosKeys
{
    public const string Queue = "chaos";

    /// <summary>The consumer group the library reads through (RedisStreamKeys.Group).</summary>
    public const string Group = "workers";

    public ChaosKeys(string prefix)
    {
        Prefix = prefix;
        Runs = $"{prefix}:runs";
        Stream = $"{prefix}:{{{Queue}}}:stream";
        Delayed = $"{prefix}:{{{Queue}}}:delayed";
        Dead = $"{prefix}:{{{Queue}}}:dead";
    }

    public string Prefix { get; }

    /// <summary>Gets the hash of completions: field = job number, value = how many times a handler completed it.</summary>
    public string Runs { get; }

    public string Stream { get; }

    public string Delayed { get; }

    public string Dead { get; }
}
