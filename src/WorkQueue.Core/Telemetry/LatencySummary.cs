namespace WorkQueue;

/// <summary>
/// Percentiles over a queue's most recent samples of one latency.
/// </summary>
/// <param name="Samples">How many recent samples the percentiles are over.</param>
/// <param name="P50">The median.</param>
/// <param name="P95">The 95th percentile.</param>
/// <param name="P99">The 99th percentile.</param>
/// <param name="Max">The largest recent sample.</param>
public sealed record LatencySummary(int Samples, TimeSpan P50, TimeSpan P95, TimeSpan P99, TimeSpan Max)
{
    /// <summary>Gets a summary with no samples.</summary>
    public static LatencySummary Empty { get; } = new(0, TimeSpan.Zero, TimeSpan.Zero, TimeSpan.Zero, TimeSpan.Zero);
}
