namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// The trivial job of the durable scenarios, for the durable queue and the in-memory queue alike: a handler resolved
/// from a new scope per job (WorkQueue's <c>IJobHandler</c> registration path), which sets the start flag and counts
/// down the batch.
/// </summary>
/// <param name="signals">The shared signals (a singleton).</param>
public sealed class SignalingOrderHandler(OrderSignals signals) : IJobHandler<Order>
{
    /// <inheritdoc/>
    public ValueTask ExecuteAsync(Order payload, CancellationToken cancellationToken)
    {
        signals.Started.Set();
        signals.Countdown.Signal();
        return default;
    }
}
