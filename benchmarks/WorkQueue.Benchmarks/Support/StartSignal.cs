using System.Diagnostics;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// A flag the job sets as the first thing it does; the benchmark thread spins on it, so the time from the enqueue to
/// seeing the flag is the time until the job started (plus one cache-line transfer back).
/// </summary>
public sealed class StartSignal
{
    private int _started;

    /// <summary>Clears the flag before the next job.</summary>
    public void Reset() => Volatile.Write(ref _started, 0);

    /// <summary>Marks the job as started.</summary>
    public void Set() => Volatile.Write(ref _started, 1);

    /// <summary>Spins (yielding, never sleeping) until the flag is set.</summary>
    /// <param name="timeout">How long to wait before failing the benchmark.</param>
    /// <param name="what">What is being measured, for the error message.</param>
    /// <exception cref="TimeoutException">The job did not start in time.</exception>
    public void SpinUntilSet(TimeSpan timeout, string what)
    {
        long deadline = Stopwatch.GetTimestamp() + (long)(timeout.TotalSeconds * Stopwatch.Frequency);
        var spinner = default(SpinWait);
        while (Volatile.Read(ref _started) == 0)
        {
            // Yield instead of sleeping so that, on a busy 2-core machine, the consumer gets a core without us adding
            // a 1 ms sleep to the measurement.
            spinner.SpinOnce(sleep1Threshold: -1);
            if (Stopwatch.GetTimestamp() > deadline)
            {
                throw new TimeoutException($"{what}: the job did not start within {timeout.TotalSeconds:0} s.");
            }
        }
    }
}
