using System.Globalization;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// The lateness samples of one benchmark (the job's first line minus its due time, in milliseconds; negative when a job
/// ran before its due time) and the process CPU time spent while they were taken, summarized for the result columns.
/// </summary>
public sealed class LatenessSamples
{
    private readonly List<double> _lateness = [];
    private double _cpuMilliseconds;
    private double _wallMilliseconds;

    /// <summary>Gets the number of samples taken.</summary>
    public int Count => _lateness.Count;

    /// <summary>Adds one sample.</summary>
    /// <param name="latenessMilliseconds">The job's start minus its due time, in milliseconds.</param>
    public void Add(double latenessMilliseconds) => _lateness.Add(latenessMilliseconds);

    /// <summary>Adds the CPU time the process used over a stretch of wall-clock time spent taking samples.</summary>
    /// <param name="cpu">The process's CPU time over the stretch.</param>
    /// <param name="wall">The stretch's length.</param>
    public void AddCpu(TimeSpan cpu, TimeSpan wall)
    {
        _cpuMilliseconds += cpu.TotalMilliseconds;
        _wallMilliseconds += wall.TotalMilliseconds;
    }

    /// <summary>Summarizes the samples: nearest-rank percentiles, extremes, early count and CPU share.</summary>
    /// <returns>The figures, keyed as the result columns read them.</returns>
    public Dictionary<string, double> Summarize()
    {
        var sorted = _lateness.Order().ToArray();
        double At(double q) => sorted[Math.Clamp((int)Math.Ceiling(q * sorted.Length) - 1, 0, sorted.Length - 1)];
        return new Dictionary<string, double>
        {
            ["samples"] = sorted.Length,
            ["min_ms"] = sorted[0],
            ["p50_ms"] = At(0.50),
            ["p95_ms"] = At(0.95),
            ["p99_ms"] = At(0.99),
            ["max_ms"] = sorted[^1],
            ["early"] = sorted.Count(l => l < 0),
            ["cpu_core_percent"] = _wallMilliseconds > 0 ? 100 * _cpuMilliseconds / _wallMilliseconds : double.NaN,
        };
    }

    /// <summary>Describes the distribution in one line, for the log.</summary>
    /// <returns>Deciles and the slowest samples, in milliseconds.</returns>
    public string Describe()
    {
        var sorted = _lateness.Order().ToArray();
        var deciles = Enumerable.Range(0, 11).Select(i => sorted[Math.Min(sorted.Length - 1, i * (sorted.Length - 1) / 10)]);
        return string.Create(
            CultureInfo.InvariantCulture,
            $"{sorted.Length} samples, lateness deciles (ms): {string.Join(" ", deciles.Select(d => d.ToString("0.###", CultureInfo.InvariantCulture)))}; slowest 5: {string.Join(" ", sorted.TakeLast(5).Select(d => d.ToString("0.###", CultureInfo.InvariantCulture)))}");
    }
}
