namespace WorkQueue.Benchmarks.Support;

/// <summary>A typed job whose only work is to say that it started.</summary>
/// <param name="signal">The signal to set.</param>
public sealed class StartSignalHandler(StartSignal signal) : IJobHandler<Order>
{
    /// <inheritdoc/>
    public ValueTask ExecuteAsync(Order payload, CancellationToken cancellationToken)
    {
        signal.Set();
        return default;
    }
}
