using System.Collections.Concurrent;

namespace WorkQueue.Benchmarks.Alternatives;

/// <summary>
/// A bounded <see cref="BlockingCollection{T}"/> drained by dedicated threads blocked in
/// <see cref="BlockingCollection{T}.GetConsumingEnumerable()"/>: the classic pre-channels producer/consumer.
/// </summary>
/// <typeparam name="T">The item type.</typeparam>
public sealed class BlockingCollectionConsumer<T> : IDisposable
{
    private readonly BlockingCollection<T> _items;
    private readonly Thread[] _threads;
    private readonly Action<T> _handle;

    /// <summary>Initializes a new instance of the <see cref="BlockingCollectionConsumer{T}"/> class and starts its threads.</summary>
    /// <param name="threads">The number of consuming threads.</param>
    /// <param name="capacity">The most items the collection holds.</param>
    /// <param name="handle">What to do with each item.</param>
    public BlockingCollectionConsumer(int threads, int capacity, Action<T> handle)
    {
        _items = new BlockingCollection<T>(boundedCapacity: capacity);
        _handle = handle;
        _threads = new Thread[threads];
        for (int i = 0; i < threads; i++)
        {
            _threads[i] = new Thread(Consume) { IsBackground = true, Name = $"BlockingCollection#{i + 1}" };
            _threads[i].Start();
        }
    }

    /// <summary>Adds an item, waiting for space when the collection is full.</summary>
    /// <param name="item">The item.</param>
    public void Add(T item) => _items.Add(item);

    /// <summary>Completes the collection, lets the threads drain it and waits for them.</summary>
    public void Dispose()
    {
        _items.CompleteAdding();
        foreach (var thread in _threads)
        {
            thread.Join();
        }

        _items.Dispose();
    }

    private void Consume()
    {
        foreach (var item in _items.GetConsumingEnumerable())
        {
            _handle(item);
        }
    }
}
