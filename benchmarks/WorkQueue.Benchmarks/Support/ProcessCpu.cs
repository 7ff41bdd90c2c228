using System.Diagnostics;

namespace WorkQueue.Benchmarks.Support;

/// <summary>The CPU time of this process, for the scenarios that measure what a process spends over a window.</summary>
public static class ProcessCpu
{
    /// <summary>Gets the CPU time (user + kernel) every thread of this process has used so far.</summary>
    /// <returns>The process's total processor time.</returns>
    public static TimeSpan Used()
    {
        using var process = Process.GetCurrentProcess();
        return process.TotalProcessorTime;
    }

    /// <summary>Gets the median of <paramref name="values"/> (the mean of the middle two for an even count).</summary>
    /// <param name="values">At least one value.</param>
    /// <returns>The median.</returns>
    public static double Median(IEnumerable<double> values)
    {
        var sorted = values.Order().ToList();
        return sorted.Count % 2 == 1 ? sorted[sorted.Count / 2] : (sorted[(sorted.Count / 2) - 1] + sorted[sorted.Count / 2]) / 2;
    }
}
