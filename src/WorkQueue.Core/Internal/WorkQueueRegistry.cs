namespace WorkQueue.Internal;

/// <summary>The names of the registered queues, gathered through the options system.</summary>
internal sealed class WorkQueueRegistry
{
    public HashSet<string> QueueNames { get; } = new(StringComparer.OrdinalIgnoreCase);
}
