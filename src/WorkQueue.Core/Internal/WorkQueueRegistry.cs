using WorkQueue.Durability;

namespace WorkQueue.Internal;

/// <summary>The names of the registered queues, gathered through the options system, matched case-insensitively.</summary>
internal sealed class WorkQueueRegistry
{
    /// <summary>Gets the names as first declared (code before configuration); lookups ignore case.</summary>
    public HashSet<string> QueueNames { get; } = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>Gets, for each durable queue, what creates its store (from the services and the queue's name as declared).</summary>
    public Dictionary<string, Func<IServiceProvider, string, IJobStore>> Stores { get; } = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>Gets the options name a queue's settings live under: one per queue whatever the case it is written in.</summary>
    public static string OptionsName(string queueName) => queueName.ToLowerInvariant();
}
