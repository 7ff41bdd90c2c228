namespace WorkQueue.Benchmarks.Support;

/// <summary>A trivial typed job: signals a <see cref="JobCountdown"/>.</summary>
/// <param name="countdown">The countdown to signal.</param>
public sealed class CountdownHandler(JobCountdown countdown) : IJobHandler<Order>
{
    /// <inheritdoc/>
    public ValueTask ExecuteAsync(Order payload, CancellationToken cancellationToken)
    {
        countdown.Signal();
        return default;
    }
}
