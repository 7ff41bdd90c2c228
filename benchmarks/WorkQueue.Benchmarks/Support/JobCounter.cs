using System.Diagnostics;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// Counts executed jobs so that an iteration cleanup can wait until every job submitted during the measurement has run.
/// </summary>
public sealed class JobCounter
{
    private long _count;

    /// <summary>Gets the number of jobs counted so far.</summary>
    public long Count => Volatile.Read(ref _count);

    /// <summary>Counts one executed job.</summary>
    public void Increment() => Interlocked.Increment(ref _count);

    /// <summary>Sets the count back to zero.</summary>
    public void Reset() => Volatile.Write(ref _count, 0);

    /// <summary>Waits until the count reaches <paramref name="target"/>, failing loudly rather than hanging.</summary>
    /// <param name="target">The count to wait for.</param>
    /// <param name="timeout">How long to wait.</param>
    /// <param name="what">What is being drained, for the error message.</param>
    /// <exception cref="TimeoutException">The count did not reach <paramref name="target"/> in time.</exception>
    public void WaitFor(long target, TimeSpan timeout, string what)
    {
        long deadline = Stopwatch.GetTimestamp() + (long)(timeout.TotalSeconds * Stopwatch.Frequency);
        var spinner = default(SpinWait);
        while (Count < target)
        {
            if (Stopwatch.GetTimestamp() > deadline)
            {
                throw new TimeoutException($"{what}: only {Count} of {target} jobs ran within {timeout.TotalSeconds:0} s.");
            }

            spinner.SpinOnce(sleep1Threshold: 20);
        }
    }
}
