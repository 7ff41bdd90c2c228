using System.Diagnostics.CodeAnalysis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The durable queues of this process, by name (case-insensitive): their stores, as the provider created them, and
/// their producers. Filled when <see cref="IWorkQueueProvider"/> is first resolved.
/// </summary>
internal sealed class DurableQueueRegistry
{
    private readonly Dictionary<string, DurableQueue> _queues = new(StringComparer.OrdinalIgnoreCase);
    private readonly Lock _lock = new();

    public IReadOnlyList<DurableQueue> Queues
    {
        get
        {
            lock (_lock)
            {
                return [.. _queues.Values];
            }
        }
    }

    public void Add(DurableQueue queue)
    {
        lock (_lock)
        {
            _queues[queue.Store.QueueName] = queue;
        }
    }

    public bool TryGet(string name, [NotNullWhen(true)] out DurableQueue? queue)
    {
        lock (_lock)
        {
            return _queues.TryGetValue(name, out queue);
        }
    }
}

/// <summary>One durable queue: its store (the consumer loop), its producer for every job type, and the reading of its jobs.</summary>
internal sealed record DurableQueue(RedisStreamStore Store, DurableWorkQueue Queue, RedisJobBrowser Jobs);
