namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// Signals when the last of a batch of jobs has run: the end-to-end point of a throughput measurement.
/// </summary>
public sealed class JobCountdown : IDisposable
{
    private readonly ManualResetEventSlim _done = new(initialState: false);
    private int _remaining;

    /// <summary>Arms the countdown for <paramref name="jobs"/> jobs.</summary>
    /// <param name="jobs">The number of jobs in the batch.</param>
    public void Reset(int jobs)
    {
        _done.Reset();
        Volatile.Write(ref _remaining, jobs);
    }

    /// <summary>Counts one job; the last one sets the signal.</summary>
    public void Signal()
    {
        if (Interlocked.Decrement(ref _remaining) == 0)
        {
            _done.Set();
        }
    }

    /// <summary>Waits for the last job of the batch.</summary>
    /// <param name="timeout">How long to wait before failing the benchmark.</param>
    /// <param name="what">What is being measured, for the error message.</param>
    /// <exception cref="TimeoutException">The batch did not finish in time.</exception>
    public void Wait(TimeSpan timeout, string what)
    {
        if (!_done.Wait(timeout))
        {
            throw new TimeoutException($"{what}: {Volatile.Read(ref _remaining)} jobs still not run after {timeout.TotalSeconds:0} s.");
        }
    }

    /// <inheritdoc/>
    public void Dispose() => _done.Dispose();
}
