namespace WorkQueue.Telemetry;

/// <summary>
/// Keeps the most recent latency samples in a fixed ring, for snapshot percentiles. Writers never block and take no
/// interlocked operation (every job records two samples): two concurrent writers may land on one slot or both count as
/// one, which only loses a sample.
/// </summary>
internal sealed class LatencyWindow
{
    private readonly long[] _ticks;
    private long _count;

    public LatencyWindow(int size = 1024)
    {
        _ticks = new long[size];
    }

    public void Record(TimeSpan value)
    {
        long index = Volatile.Read(ref _count);
        Volatile.Write(ref _ticks[index % _ticks.Length], value.Ticks);
        Volatile.Write(ref _count, index + 1);
    }

    public LatencySummary Summarize()
    {
        int n = (int)Math.Min(Volatile.Read(ref _count), _ticks.Length);
        if (n == 0)
        {
            return LatencySummary.Empty;
        }

        var copy = new long[n];
        Array.Copy(_ticks, copy, n);
        Array.Sort(copy);
        return new LatencySummary(n, At(copy, 0.50), At(copy, 0.95), At(copy, 0.99), TimeSpan.FromTicks(copy[^1]));

        static TimeSpan At(long[] sorted, double quantile) =>
            TimeSpan.FromTicks(sorted[Math.Min(sorted.Length - 1, (int)Math.Ceiling(quantile * sorted.Length) - 1)]);
    }
}
