using System.Diagnostics;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// A flag the job sets as the first thing it does; the benchmark thread spins on it, so the time from the enqueue to
/// seeing the flag is the time until the job started (plus the flag's way back to the spinning thread). The job also
/// notes when it set the flag, so each sample has a second figure, enqueue to the job's first line, without the way
/// back (see <see cref="Describe"/>).
/// </summary>
public sealed class StartSignal
{
    private readonly List<double> _direct = [];
    private int _started;
    private long _enqueuedAt;
    private long _startedAt;
    private string? _what;

    /// <summary>Clears the flag before the next job.</summary>
    public void Reset()
    {
        _enqueuedAt = 0;
        Volatile.Write(ref _started, 0);
    }

    /// <summary>Notes the time of the enqueue about to be made (call it just before the enqueue).</summary>
    public void MarkEnqueue() => _enqueuedAt = Stopwatch.GetTimestamp();

    /// <summary>Marks the job as started, noting when.</summary>
    public void Set()
    {
        if (Volatile.Read(ref _started) == 0)
        {
            _startedAt = Stopwatch.GetTimestamp();
            Volatile.Write(ref _started, 1);
        }
    }

    /// <summary>
    /// Describes the last <paramref name="samples"/> enqueue-to-first-line times (the measured iterations, which come after
    /// the warm-ups), or returns <see langword="null"/> when none were taken.
    /// </summary>
    /// <param name="samples">How many of the latest samples to describe.</param>
    /// <returns>One line, for the benchmark's log.</returns>
    public string? Describe(int samples)
    {
        if (_direct.Count == 0)
        {
            return null;
        }

        var sorted = _direct.Skip(Math.Max(0, _direct.Count - samples)).Order().ToArray();
        double At(double q) => sorted[Math.Min(sorted.Length - 1, (int)Math.Ceiling(q * sorted.Length) - 1)];
        return $"{_what}: enqueue -> job's first line (no way back), {sorted.Length} samples: P50 {At(0.50):F2} us, P95 {At(0.95):F2} us, P99 {At(0.99):F2} us";
    }

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

        if (_enqueuedAt != 0)
        {
            _what = what;
            _direct.Add(Stopwatch.GetElapsedTime(_enqueuedAt, _startedAt).TotalMicroseconds);
        }
    }
}
