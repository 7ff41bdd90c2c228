using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;

namespace WorkQueue.Testing.Internal;

/// <summary>
/// The engine's <see cref="IWorkQueueProvider"/> with every producer it hands out wrapped by the harness (one wrapper
/// per queue, so a queue resolved twice is one instance, as it is without the harness).
/// </summary>
internal sealed class TestingWorkQueueProvider(IWorkQueueProvider inner, WorkQueueTestHarness harness) : IWorkQueueProvider
{
    private readonly ConcurrentDictionary<string, RecordingWorkQueue> _queues = new(StringComparer.OrdinalIgnoreCase);
    private readonly ConcurrentDictionary<string, RecordingInMemoryWorkQueue> _inMemory = new(StringComparer.OrdinalIgnoreCase);

    public IWorkQueueProvider Inner => inner;

    public IReadOnlyCollection<IWorkQueueControl> Queues => inner.Queues;

    public IWorkQueue GetQueue(string name)
    {
        // The engine's own lookup first: it validates the name and refuses an unknown queue with its own message.
        var queue = inner.GetQueue(name);
        return queue is IInMemoryWorkQueue
            ? GetInMemoryQueue(queue.Name)
            : _queues.GetOrAdd(queue.Name, static (_, s) => new RecordingWorkQueue(s.queue, s.harness), (queue, harness));
    }

    public IInMemoryWorkQueue GetInMemoryQueue(string name)
    {
        var queue = inner.GetInMemoryQueue(name);
        return _inMemory.GetOrAdd(queue.Name, static (_, s) => new RecordingInMemoryWorkQueue(s.queue, s.harness), (queue, harness));
    }

    public bool TryGetControl(string name, [NotNullWhen(true)] out IWorkQueueControl? queue) => inner.TryGetControl(name, out queue);

    public Task<IReadOnlyList<ShutdownReport>> StopAsync(TimeSpan drainTimeout, CancellationToken cancellationToken = default) =>
        inner.StopAsync(drainTimeout, cancellationToken);
}
