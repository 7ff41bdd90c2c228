namespace WorkQueue.Benchmarks.Support;

/// <summary>A trivial typed job: counts that it ran.</summary>
/// <param name="counter">The counter to increment.</param>
public sealed class CountingHandler(JobCounter counter) : IJobHandler<Order>
{
    /// <inheritdoc/>
    public ValueTask ExecuteAsync(Order payload, CancellationToken cancellationToken)
    {
        counter.Increment();
        return default;
    }
}
