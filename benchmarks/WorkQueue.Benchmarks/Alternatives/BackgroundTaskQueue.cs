using System.Threading.Channels;

namespace WorkQueue.Benchmarks.Alternatives;

/// <summary>
/// The Microsoft docs' <c>DefaultBackgroundTaskQueue</c>: a bounded <see cref="Channel{T}"/> of
/// <c>Func&lt;CancellationToken, ValueTask&gt;</c> in <see cref="BoundedChannelFullMode.Wait"/> mode, copied as is.
/// </summary>
public sealed class BackgroundTaskQueue : IBackgroundTaskQueue
{
    private readonly Channel<Func<CancellationToken, ValueTask>> _queue;

    /// <summary>Initializes a new instance of the <see cref="BackgroundTaskQueue"/> class.</summary>
    /// <param name="capacity">The most work items the queue holds.</param>
    public BackgroundTaskQueue(int capacity)
    {
        var options = new BoundedChannelOptions(capacity)
        {
            FullMode = BoundedChannelFullMode.Wait,
        };
        _queue = Channel.CreateBounded<Func<CancellationToken, ValueTask>>(options);
    }

    /// <inheritdoc/>
    public async ValueTask QueueBackgroundWorkItemAsync(Func<CancellationToken, ValueTask> workItem)
    {
        ArgumentNullException.ThrowIfNull(workItem);
        await _queue.Writer.WriteAsync(workItem);
    }

    /// <inheritdoc/>
    public async ValueTask<Func<CancellationToken, ValueTask>> DequeueAsync(CancellationToken cancellationToken)
    {
        var workItem = await _queue.Reader.ReadAsync(cancellationToken);
        return workItem;
    }

    /// <summary>
    /// Removes every queued item without running it. Not part of the docs' sample: the enqueue benchmark empties the
    /// queue between iterations with it, outside the measurement.
    /// </summary>
    /// <returns>The number of items removed.</returns>
    public long DiscardAll()
    {
        long count = 0;
        while (_queue.Reader.TryRead(out _))
        {
            count++;
        }

        return count;
    }
}
