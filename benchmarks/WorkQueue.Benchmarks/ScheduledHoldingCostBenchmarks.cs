using System.Diagnostics;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Scenario 8: what an idle queue pays to hold scheduled jobs that are due far in the future: the managed memory they
/// retain, the time it took to schedule them, and the process CPU time over a fixed window
/// (<see cref="BenchmarkSettings.IdleWindow"/>, 10 s) while they wait, against the same idle queue holding none.
/// Not a micro-benchmark: each benchmark runs once per process.
/// </summary>
/// <remarks>
/// <c>[GlobalSetup]</c> starts the default queue with every option at its default but
/// <see cref="WorkQueueOptions.MaxScheduledJobs"/> (1,000,000 on every row), warms the schedule path up (1,000 jobs due
/// in a millisecond, all run, then a second for the runtime to recompile the code they ran), and then schedules the
/// row's jobs with <c>Schedule(handler, payload, delay)</c>, delays drawn at random (seeded) between one and two days,
/// one shared handler and one shared payload, so the memory is the queue's own per job. The scheduling loop is timed
/// (its garbage collections included), and <see cref="GC.GetTotalMemory(bool)"/> after a full collection is read before
/// and after it. The benchmark then reads the process CPU time, sleeps for the window and reads it again, as
/// <see cref="IdleCpuBenchmarks"/> does; after the window (outside it) the queue must still hold every job, none may have
/// run, and a job scheduled a millisecond ahead must run within 10 s, so a stopped timer cannot pass for a cheap one.
/// The memory diagnoser runs the benchmark once more, so each process measures two windows.
/// </remarks>
[MemoryDiagnoser]
[FixedWindowRun]
[Config(typeof(Config))]
public class ScheduledHoldingCostBenchmarks
{
    /// <summary>
    /// The <see cref="WorkQueueOptions.MaxScheduledJobs"/> of every row: room for the largest row and the probe job
    /// scheduled after each window (a full queue refuses it).
    /// </summary>
    public const int MaxScheduledJobs = 1_000_000 + 1;

    private const int WarmUpJobs = 1_000;
    private const int Seed = 20261124;

    private static readonly TimeSpan FarAhead = TimeSpan.FromDays(1);
    private static readonly TimeSpan ProbeTimeout = TimeSpan.FromSeconds(10);
    private static readonly List<double> Windows = [];

    private readonly Order _order = new(42);
    private readonly JobCounter _heldRan = new();
    private readonly JobCounter _warmUpRan = new();
    private readonly StartSignal _probe = new();
    private readonly Dictionary<string, double> _setupFigures = [];
    private WorkQueueHost? _workQueue;
    private int _held;

    [GlobalSetup(Target = nameof(NoScheduledJobs_ProcessCpuOverWindow))]
    public void SetupNone() => Setup(0);

    [GlobalSetup(Target = nameof(Hold100kScheduledJobs_ProcessCpuOverWindow))]
    public void Setup100k() => Setup(100_000);

    [GlobalSetup(Target = nameof(Hold1MScheduledJobs_ProcessCpuOverWindow))]
    public void Setup1M() => Setup(1_000_000);

    [GlobalCleanup]
    public void Cleanup() => _workQueue?.Dispose();

    [Benchmark(Baseline = true, Description = "idle queue holding no scheduled job")]
    public double NoScheduledJobs_ProcessCpuOverWindow() => MeasureWindow(nameof(NoScheduledJobs_ProcessCpuOverWindow));

    [Benchmark(Description = "idle queue holding 100,000 scheduled jobs (due in 1-2 days)")]
    public double Hold100kScheduledJobs_ProcessCpuOverWindow() => MeasureWindow(nameof(Hold100kScheduledJobs_ProcessCpuOverWindow));

    [Benchmark(Description = "idle queue holding 1,000,000 scheduled jobs (due in 1-2 days)")]
    public double Hold1MScheduledJobs_ProcessCpuOverWindow() => MeasureWindow(nameof(Hold1MScheduledJobs_ProcessCpuOverWindow));

    private static void Settle() => Thread.Sleep(BenchmarkSettings.Quick ? TimeSpan.FromMilliseconds(200) : TimeSpan.FromSeconds(1));

    private void Setup(int jobs)
    {
        _workQueue = WorkQueueHost.Start(o => o.MaxScheduledJobs = MaxScheduledJobs);
        var queue = _workQueue.Queue;

        var warmUp = new CountingHandler(_warmUpRan);
        for (int i = 0; i < WarmUpJobs; i++)
        {
            queue.Schedule(warmUp, _order, TimeSpan.FromMilliseconds(1));
        }

        _warmUpRan.WaitFor(WarmUpJobs, ProbeTimeout, "the warm-up's scheduled jobs");

        // Past the runtime's tiered compilation of the schedule path (recompiled 100 ms after its 30th call).
        Thread.Sleep(TimeSpan.FromSeconds(1));

        var random = new Random(Seed);
        var delays = new TimeSpan[jobs];
        for (int i = 0; i < jobs; i++)
        {
            delays[i] = FarAhead + TimeSpan.FromTicks(random.NextInt64(TimeSpan.TicksPerDay));
        }

        var held = new CountingHandler(_heldRan);
        long before = GC.GetTotalMemory(forceFullCollection: true);
        var pausedBefore = GC.GetTotalPauseDuration();
        long start = Stopwatch.GetTimestamp();
        foreach (var delay in delays)
        {
            queue.Schedule(held, _order, delay);
        }

        var elapsed = Stopwatch.GetElapsedTime(start);
        var paused = GC.GetTotalPauseDuration() - pausedBefore;
        long after = GC.GetTotalMemory(forceFullCollection: true);
        GC.KeepAlive(delays);

        _held = jobs;
        CheckHolding("after scheduling");
        _setupFigures["jobs_held"] = jobs;
        if (jobs > 0)
        {
            _setupFigures["bytes_per_job"] = (after - before) / (double)jobs;
            _setupFigures["held_mb"] = (after - before) / (1024.0 * 1024.0);
            _setupFigures["schedule_ns"] = elapsed.TotalNanoseconds / jobs;
            _setupFigures["schedule_gc_pause_ms"] = paused.TotalMilliseconds;
            _setupFigures["schedule_ms"] = elapsed.TotalMilliseconds;
        }

        Settle();
    }

    private void CheckHolding(string when)
    {
        int scheduled = _workQueue!.Control.GetSnapshot().Scheduled;
        if (scheduled != _held || _heldRan.Count != 0)
        {
            throw new InvalidOperationException($"{when}: the queue holds {scheduled} scheduled jobs, expected {_held}; {_heldRan.Count} of them ran.");
        }
    }

    private double MeasureWindow(string method)
    {
        var window = BenchmarkSettings.IdleWindow;
        var before = ProcessCpu.Used();
        Thread.Sleep(window);
        var cpu = ProcessCpu.Used() - before;

        // Jobs dropped, or a timer that stopped, would make holding them look cheaper than it is.
        CheckHolding("after the window");
        _probe.Reset();
        _workQueue!.Queue.Schedule(new StartSignalHandler(_probe), _order, TimeSpan.FromMilliseconds(1));
        _probe.SpinUntilSet(ProbeTimeout, $"{method}: a job scheduled 1 ms ahead after the window");

        Windows.Add(cpu.TotalMilliseconds);
        var results = new Dictionary<string, double>(_setupFigures)
        {
            ["window_s"] = window.TotalSeconds,
            ["cpu_ms"] = ProcessCpu.Median(Windows),
            ["cpu_ms_max"] = Windows.Max(),
            ["core_percent"] = 100 * ProcessCpu.Median(Windows) / window.TotalMilliseconds,
            ["windows"] = Windows.Count,
        };
        ResultStore.Write(ResultStore.Key(typeof(ScheduledHoldingCostBenchmarks), method), results);
        return cpu.TotalMilliseconds;
    }

    private sealed class Config : ManualConfig
    {
        public Config()
        {
            AddColumn(
                new ResultColumn("jobs_held", "Jobs held", "Jobs held: scheduled jobs the queue holds through the window", "N0"),
                new ResultColumn("bytes_per_job", "Bytes/job", "Bytes/job: managed memory retained per scheduled job (GC.GetTotalMemory after a full collection, after minus before scheduling, divided by the jobs; one shared handler and payload)", "N1"),
                new ResultColumn("held_mb", "Held [MB]", "Held [MB]: the same difference, in total (MiB)", "N1"),
                new ResultColumn("schedule_ns", "Schedule [ns/call]", "Schedule [ns/call]: the time to schedule the jobs into the empty queue, divided by the jobs (one pass, its garbage collections included)", "N1"),
                new ResultColumn("schedule_ms", "Schedule all [ms]", "Schedule all [ms]: that pass's whole time", "N1"),
                new ResultColumn("schedule_gc_pause_ms", "GC pause [ms]", "GC pause [ms]: the garbage collectors' pauses during that pass (GC.GetTotalPauseDuration), part of Schedule all [ms]", "N1"),
                new ResultColumn("window_s", "Window [s]", "Window [s]: the length of each measured window"),
                new ResultColumn("cpu_ms", "CPU [ms]", "CPU [ms]: process CPU time (user + kernel) over one window; median of the windows measured in the process"),
                new ResultColumn("cpu_ms_max", "CPU max [ms]", "CPU max [ms]: the largest of the windows measured"),
                new ResultColumn("core_percent", "Core %", "Core %: CPU [ms] as a share of one core over the window", "N2"),
                new ResultColumn("cpu_ms", "CPU ratio", "CPU ratio: CPU [ms] / the baseline's CPU [ms] (the same idle queue holding no job)", "N2", ResultRatio.OverBaseline),
                new ResultColumn("windows", "Windows", "Windows: the number of windows measured in the process", "N0"));
            HideColumns(Column.Mean, Column.Error, Column.StdDev, Column.Median, Column.Ratio, Column.RatioSD);
        }
    }
}
