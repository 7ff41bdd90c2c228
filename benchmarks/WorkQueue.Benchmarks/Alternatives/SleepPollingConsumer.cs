using System.Collections.Concurrent;

namespace WorkQueue.Benchmarks.Alternatives;

/// <summary>
/// The "fix" from the original incident: a <see cref="ConcurrentQueue{T}"/> drained by dedicated threads that poll it
/// and <see cref="Thread.Sleep(int)"/> whenever it is empty. Unbounded, as the incident's code was.
/// </summary>
/// <typeparam name="T">The item type.</typeparam>
public sealed class SleepPollingConsumer<T> : IDisposable
{
    private readonly ConcurrentQueue<T> _items = new();
    private readonly Thread[] _threads;
    private readonly Action<T> _handle;
    private readonly int _sleepMilliseconds;
    private volatile bool _stopping;

    /// <summary>Initializes a new instance of the <see cref="SleepPollingConsumer{T}"/> class and starts its threads.</summary>
    /// <param name="threads">The number of polling threads.</param>
    /// <param name="sleepMilliseconds">How long a thread sleeps when it finds the queue empty.</param>
    /// <param name="handle">What to do with each item.</param>
    public SleepPollingConsumer(int threads, int sleepMilliseconds, Action<T> handle)
    {
        _handle = handle;
        _sleepMilliseconds = sleepMilliseconds;
        _threads = new Thread[threads];
        for (int i = 0; i < threads; i++)
        {
            _threads[i] = new Thread(Poll) { IsBackground = true, Name = $"SleepPolling#{i + 1}" };
            _threads[i].Start();
        }
    }

    /// <summary>Gets the number of polling threads still running.</summary>
    public int LiveThreads => _threads.Count(t => t.IsAlive);

    /// <summary>Queues an item.</summary>
    /// <param name="item">The item.</param>
    public void Enqueue(T item) => _items.Enqueue(item);

    /// <summary>Stops the threads (waking sleeping ones) and waits for them.</summary>
    public void Dispose()
    {
        _stopping = true;
        foreach (var thread in _threads)
        {
            thread.Interrupt();
        }

        foreach (var thread in _threads)
        {
            thread.Join();
        }
    }

    private void Poll()
    {
        try
        {
            while (!_stopping)
            {
                if (_items.TryDequeue(out var item))
                {
                    _handle(item);
                }
                else
                {
                    Thread.Sleep(_sleepMilliseconds);
                }
            }
        }
        catch (ThreadInterruptedException)
        {
            // Dispose woke the thread from its sleep.
        }
    }
}
