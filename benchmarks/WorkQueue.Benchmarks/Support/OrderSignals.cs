namespace WorkQueue.Benchmarks.Support;

/// <summary>What the durable scenarios' jobs report to the benchmark thread: a batch's countdown and a start flag.</summary>
public sealed class OrderSignals : IDisposable
{
    /// <summary>Gets the countdown of the current throughput batch.</summary>
    public JobCountdown Countdown { get; } = new();

    /// <summary>Gets the flag the wake-up samples wait for.</summary>
    public StartSignal Started { get; } = new();

    /// <inheritdoc/>
    public void Dispose() => Countdown.Dispose();
}
