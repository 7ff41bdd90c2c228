using System.Diagnostics;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// What a delayed job calls as its first line: it notes the time (<see cref="Stopwatch.GetTimestamp"/>) before anything
/// else, and wakes the benchmark thread, which blocks meanwhile (it does not spin: on 2 cores a spinning thread would
/// compete with the timer and worker threads it waits for). The lateness of a sample is that time minus the due time
/// the benchmark computed from the same clock just before it scheduled the job.
/// </summary>
/// <remarks>
/// Each sample expects one job id; a call with another id (a job of an earlier sample that ran late, which a timeout
/// would have reported already) is ignored, so a stray job can never pass for the expected one.
/// </remarks>
public sealed class LatenessProbe : IDisposable
{
    private readonly ManualResetEventSlim _hit = new(initialState: false, spinCount: 0);
    private int _expected = -1;
    private long _hitAt;

    /// <summary>Prepares for the job of the next sample.</summary>
    /// <param name="id">The id the job will pass to <see cref="Hit"/>.</param>
    public void Expect(int id)
    {
        _hit.Reset();
        Volatile.Write(ref _hitAt, 0);
        Volatile.Write(ref _expected, id);
    }

    /// <summary>Notes that job <paramref name="id"/> has started (the job's first line).</summary>
    /// <param name="id">The job's id.</param>
    public void Hit(int id)
    {
        long now = Stopwatch.GetTimestamp();
        if (id == Volatile.Read(ref _expected) && Interlocked.CompareExchange(ref _hitAt, now, 0) == 0)
        {
            _hit.Set();
        }
    }

    /// <summary>Blocks until the expected job has started and returns the time its first line ran.</summary>
    /// <param name="timeout">How long to wait before failing the benchmark.</param>
    /// <param name="what">What is being measured, for the error message.</param>
    /// <returns>The job's start, a <see cref="Stopwatch"/> timestamp.</returns>
    /// <exception cref="TimeoutException">The job did not start in time.</exception>
    public long WaitForHit(TimeSpan timeout, string what) =>
        _hit.Wait(timeout)
            ? Volatile.Read(ref _hitAt)
            : throw new TimeoutException($"{what}: job {Volatile.Read(ref _expected)} did not start within {timeout.TotalSeconds:0} s.");

    /// <inheritdoc/>
    public void Dispose() => _hit.Dispose();
}
