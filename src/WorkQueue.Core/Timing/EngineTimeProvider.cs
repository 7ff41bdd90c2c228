using System.Diagnostics;
using System.Runtime.InteropServices;

namespace WorkQueue.Timing;

/// <summary>
/// A <see cref="TimeProvider"/> whose timers fire on one dedicated background thread instead of the CLR thread pool,
/// so the engine's own timing (job timeouts, retry delays, autoscaling, stuck-job checks) keeps working while other
/// code starves the pool. Callbacks must be short and must not block: they all share the one thread.
/// </summary>
/// <remarks>
/// The runtime's waits take whole milliseconds, so a due time with a fraction of a millisecond would be reached up to
/// 1 ms late (a delayed job's p99 lateness was 1.97 ms, benchmarks/README.md scenario 7). On Linux the thread waits
/// whole milliseconds on its monitor (a new earlier timer pulses it) and sleeps the last fraction with
/// <c>nanosleep</c>, outside the lock: no spinning, and a timer added meanwhile is at most that fraction late.
/// </remarks>
internal sealed partial class EngineTimeProvider : TimeProvider
{
    private readonly object _lock = new();
    private readonly PriorityQueue<(EngineTimer Timer, long Version), long> _due = new();
    private Thread? _thread;
    private int _stale;

    private EngineTimeProvider()
    {
    }

    /// <summary>Gets the number of entries in the timer heap, stale ones included (for tests).</summary>
    internal int QueuedEntries
    {
        get
        {
            lock (_lock)
            {
                return _due.Count;
            }
        }
    }

    /// <summary>Gets the process-wide instance; its thread starts with the first timer.</summary>
    public static EngineTimeProvider Instance { get; } = new();

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        ArgumentNullException.ThrowIfNull(callback);
        var timer = new EngineTimer(this, callback, state);
        timer.Change(dueTime, period);
        return timer;
    }

    /// <summary>Schedules (or, with an infinite due time, disarms) a timer; the version makes older entries stale.</summary>
    private void Schedule(EngineTimer timer, TimeSpan dueTime, TimeSpan period)
    {
        lock (_lock)
        {
            if (timer.Queued)
            {
                // Its queued entry goes stale; drop stale entries in bulk once they outnumber the live ones.
                timer.Queued = false;
                if (++_stale > 1024 && _stale > _due.Count / 2)
                {
                    Compact();
                }
            }

            long version = ++timer.Version;
            timer.Period = period;
            if (dueTime == Timeout.InfiniteTimeSpan)
            {
                return;
            }

            timer.Queued = true;

            long due = Stopwatch.GetTimestamp() + (long)(Math.Max(0, dueTime.TotalSeconds) * Stopwatch.Frequency);
            _due.Enqueue((timer, version), due);
            if (_thread is null)
            {
                _thread = new Thread(Run) { IsBackground = true, Name = "WorkQueue timers" };
                _thread.UnsafeStart();
            }
            else if (_due.TryPeek(out _, out long first) && first == due)
            {
                Monitor.Pulse(_lock);
            }
        }
    }

    private void Compact()
    {
        var live = new List<((EngineTimer Timer, long Version), long)>(_due.Count - _stale);
        foreach (var entry in _due.UnorderedItems)
        {
            if (entry.Element.Version == entry.Element.Timer.Version)
            {
                live.Add(entry);
            }
        }

        _due.Clear();
        _due.EnqueueRange(live);
        _stale = 0;
    }

    private void Run()
    {
        while (true)
        {
            EngineTimer timer = null!;
            long fraction = 0;
            lock (_lock)
            {
                while (true)
                {
                    if (_due.TryPeek(out var next, out long due))
                    {
                        if (next.Version != next.Timer.Version)
                        {
                            _due.Dequeue();
                            _stale = Math.Max(0, _stale - 1);
                            continue;
                        }

                        long wait = due - Stopwatch.GetTimestamp();
                        if (wait <= 0)
                        {
                            _due.Dequeue();
                            timer = next.Timer;
                            if (timer.Period is { Ticks: > 0 } period)
                            {
                                _due.Enqueue((timer, next.Version), Stopwatch.GetTimestamp() + (long)(period.TotalSeconds * Stopwatch.Frequency));
                            }
                            else
                            {
                                timer.Version++;
                                timer.Queued = false;
                            }

                            break;
                        }

                        long wholeMs = wait * 1000 / Stopwatch.Frequency;
                        if (wholeMs == 0 && s_preciseSleep)
                        {
                            // Less than a millisecond to go: sleep that fraction outside the lock, then look again.
                            fraction = wait;
                            break;
                        }

                        Monitor.Wait(_lock, (int)Math.Clamp(s_preciseSleep ? wholeMs : wholeMs + 1, 1, int.MaxValue));
                    }
                    else
                    {
                        Monitor.Wait(_lock);
                    }
                }
            }

            if (fraction > 0)
            {
                SleepFraction(fraction);
                continue;
            }

            try
            {
                timer.Callback(timer.State);
            }
            catch (Exception)
            {
                // Engine callbacks guard themselves; one that still throws must not take every other timer with it.
            }
        }
    }

    /// <summary>Whether the last fraction of a millisecond can be slept precisely (Linux: <c>nanosleep</c>).</summary>
    private static readonly bool s_preciseSleep = OperatingSystem.IsLinux() && (RuntimeInformation.ProcessArchitecture is Architecture.X64 or Architecture.Arm64);

    private static void SleepFraction(long stopwatchTicks)
    {
        var request = new TimeSpec { Seconds = 0, Nanoseconds = (stopwatchTicks * 1_000_000_000 / Stopwatch.Frequency) };
        // Interrupted by a signal, it returns early: the caller looks at the heap again, which is all a wake-up needs.
        _ = NanoSleep(in request, IntPtr.Zero);
    }

    [LibraryImport("libc", EntryPoint = "nanosleep")]
    private static partial int NanoSleep(in TimeSpec request, IntPtr remaining);

    /// <summary>A 64-bit Linux <c>struct timespec</c>.</summary>
    [StructLayout(LayoutKind.Sequential)]
    private struct TimeSpec
    {
        public long Seconds;
        public long Nanoseconds;
    }

    private sealed class EngineTimer(EngineTimeProvider owner, TimerCallback callback, object? state) : ITimer
    {
        public TimerCallback Callback { get; } = callback;

        public object? State { get; } = state;

        /// <summary>Guarded by the owner's lock.</summary>
        public long Version { get; set; }

        /// <summary>Guarded by the owner's lock.</summary>
        public TimeSpan Period { get; set; }

        /// <summary>Whether an entry with the current version is in the queue (guarded by the owner's lock).</summary>
        public bool Queued { get; set; }

        public bool Change(TimeSpan dueTime, TimeSpan period)
        {
            owner.Schedule(this, dueTime, period);
            return true;
        }

        public void Dispose() => owner.Schedule(this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);

        public ValueTask DisposeAsync()
        {
            Dispose();
            return ValueTask.CompletedTask;
        }
    }
}
