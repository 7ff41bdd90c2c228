using System.Threading.Channels;

namespace WorkQueue.Benchmarks.Alternatives;

/// <summary>
/// The hand-written floor: a bounded <see cref="Channel{T}"/> of payloads and one async consumer loop
/// (<c>WaitToReadAsync</c> + <c>TryRead</c>) that calls the handler directly: no delegate per job, no bookkeeping.
/// </summary>
/// <typeparam name="T">The item type.</typeparam>
public sealed class ChannelConsumer<T> : IDisposable
{
    private readonly Channel<T> _channel;
    private readonly Action<T> _handle;
    private readonly Task _consumer;

    /// <summary>Initializes a new instance of the <see cref="ChannelConsumer{T}"/> class and starts its consumer.</summary>
    /// <param name="capacity">The channel's capacity.</param>
    /// <param name="handle">What to do with each item.</param>
    public ChannelConsumer(int capacity, Action<T> handle)
    {
        _channel = Channel.CreateBounded<T>(new BoundedChannelOptions(capacity)
        {
            FullMode = BoundedChannelFullMode.Wait,
            SingleReader = true,
            SingleWriter = false,
            AllowSynchronousContinuations = false,
        });
        _handle = handle;
        _consumer = Task.Run(ConsumeAsync);
    }

    /// <summary>Writes an item without waiting.</summary>
    /// <param name="item">The item.</param>
    /// <returns><see langword="true"/> if the item was written; <see langword="false"/> if the channel is full.</returns>
    public bool TryWrite(T item) => _channel.Writer.TryWrite(item);

    /// <summary>Completes the channel and waits for the consumer to drain it.</summary>
    public void Dispose()
    {
        _channel.Writer.TryComplete();
        _consumer.GetAwaiter().GetResult();
    }

    private async Task ConsumeAsync()
    {
        var reader = _channel.Reader;
        while (await reader.WaitToReadAsync().ConfigureAwait(false))
        {
            while (reader.TryRead(out var item))
            {
                _handle(item);
            }
        }
    }
}
