using System.Diagnostics;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Scenario 7: how late a delayed job starts on an idle machine: the time its first line runs minus its due time, both
/// read from <see cref="Stopwatch"/> (the due time is the timestamp taken just before the schedule call plus the
/// delay). Not a micro-benchmark: each benchmark runs once per process and takes its own samples.
/// </summary>
/// <remarks>
/// Every sample leaves the process idle for <see cref="IdleGap"/> plus, for the candidates that poll, a random part of
/// their polling period (seeded, uniform), so that the job arrives at a random point of the period as a real one
/// would: back to back, every sample would arrive just after a poll and measure the worst case. It then schedules one
/// job due <see cref="Delay"/> plus a random part of a millisecond from now (timers that wait in whole milliseconds
/// would otherwise always be handed a whole number; one WorkQueue row is, to show what that rounding costs) and blocks
/// (it does not spin) until the job's first line has run. The same seed gives every row the same delays and arrival points. The samples of a row, after its warm-up samples,
/// become the lateness columns (nearest-rank percentiles, in milliseconds; negative when a job ran before its due time)
/// and the process CPU time spent over them.
/// <para>
/// The candidates that poll wait seconds per sample, so they take fewer samples (see <c>benchmarks/README.md</c>):
/// Hangfire's default 15 s polling takes 20, so its P95 and P99 are its two slowest samples.
/// </para>
/// <para>
/// No <c>[MemoryDiagnoser]</c>: it would run every benchmark a second time (Hangfire's default row takes about five
/// minutes). The memory a scheduled job holds is scenario 8's (<see cref="ScheduledHoldingCostBenchmarks"/>).
/// </para>
/// </remarks>
[FixedWindowRun]
[Config(typeof(Config))]
public class ScheduledLatenessBenchmarks
{
    /// <summary>The whole-millisecond part of every job's delay; a random part of one more millisecond is added.</summary>
    public static readonly TimeSpan Delay = TimeSpan.FromMilliseconds(20);

    /// <summary>How long the process is left idle before each sample (on top of any random arrival).</summary>
    public static readonly TimeSpan IdleGap = TimeSpan.FromMilliseconds(2);

    /// <summary>The short polling interval of the second Hangfire row: 1 s.</summary>
    public static readonly TimeSpan HangfireShortPolling = TimeSpan.FromSeconds(1);

    private const int Seed = 20261124;

    // Samples of this process's benchmark (one benchmark per process), kept across invocations.
    private static readonly LatenessSamples Samples = new();

    private readonly LatenessProbe _probe = new();
    private Timer? _timer;
    private WorkQueueHost? _workQueue;
    private LatenessProbeHandler? _handler;
    private HangfireHost? _hangfire;
    private CoravelSchedulerHost? _coravel;

    /// <summary>
    /// How long a row pauses between its warm-up samples and its measured ones: the runtime recompiles the code the
    /// warm-ups ran (tiered compilation) on a background thread 100 ms after its 30th call, which would otherwise fall in
    /// the measured samples' CPU time.
    /// </summary>
    public static readonly TimeSpan SettleAfterWarmUp = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Samples of the candidates that do not poll: 1,000 (100 with <c>--quick</c>) after 100 warm-ups, past the calls
    /// after which the runtime recompiles a method (30, twice with dynamic PGO's instrumented tier in between).
    /// </summary>
    private static Plan InProcess => new(100, BenchmarkSettings.Quick ? 100 : 1_000, TimeSpan.Zero);

    [GlobalSetup(Targets = [nameof(WorkQueue_Schedule), nameof(WorkQueue_Schedule_WholeMillisecondDelays)])]
    public void SetupWorkQueue()
    {
        _handler = new LatenessProbeHandler(_probe);
        _workQueue = WorkQueueHost.StartFixed(workers: 1, capacity: 1_000);
        _workQueue.WaitForWorkers(1);
    }

    [GlobalSetup(Target = nameof(Hangfire_Schedule_DefaultPolling15s))]
    public void SetupHangfireDefault() => _hangfire = HangfireHost.Start(workers: 1, _probe.Hit);

    [GlobalSetup(Target = nameof(Hangfire_Schedule_Polling1s))]
    public void SetupHangfireShortPolling() => _hangfire = HangfireHost.Start(workers: 1, _probe.Hit, HangfireShortPolling);

    [GlobalSetup(Target = nameof(Hangfire_Schedule_Polling0_BackToBack))]
    public void SetupHangfireNoPollingDelay() => _hangfire = HangfireHost.Start(workers: 1, _probe.Hit, TimeSpan.Zero);

    [GlobalSetup(Target = nameof(Coravel_EverySecond_WhenDue_Once))]
    public void SetupCoravel() => _coravel = CoravelSchedulerHost.Start();

    [GlobalCleanup]
    public void Cleanup()
    {
        _timer?.Dispose();
        _workQueue?.Dispose();
        _hangfire?.Dispose();
        _coravel?.Dispose();
        _probe.Dispose();
    }

    [Benchmark(Baseline = true, Description = "System.Threading.Timer, one per job (runs on the thread pool)")]
    public double DotNetTimer_OneShotPerJob() => Measure(nameof(DotNetTimer_OneShotPerJob), InProcess, (id, delay, _) =>
    {
        _timer?.Dispose();
        _timer = new Timer(
            static s =>
            {
                var (probe, id) = ((LatenessProbe, int))s!;
                probe.Hit(id);
            },
            (_probe, id),
            delay,
            Timeout.InfiniteTimeSpan);
    });

    [Benchmark(Description = "WorkQueue Schedule(handler, payload, delay), 1 worker")]
    public double WorkQueue_Schedule() => Measure(nameof(WorkQueue_Schedule), InProcess, (id, delay, _) =>
        _workQueue!.Queue.Schedule(_handler!, new Order(id), delay));

    [Benchmark(Description = "WorkQueue Schedule(handler, payload, delay), 1 worker, whole-millisecond delays (best case)")]
    public double WorkQueue_Schedule_WholeMillisecondDelays() => Measure(
        nameof(WorkQueue_Schedule_WholeMillisecondDelays),
        InProcess with { WholeMilliseconds = true },
        (id, delay, _) => _workQueue!.Queue.Schedule(_handler!, new Order(id), delay));

    [Benchmark(Description = "Hangfire client.Schedule, SchedulePollingInterval 15 s (default), 1 worker (InMemory)")]
    public double Hangfire_Schedule_DefaultPolling15s() => Measure(
        nameof(Hangfire_Schedule_DefaultPolling15s),
        BenchmarkSettings.Quick ? new(1, 2, TimeSpan.FromSeconds(15)) : new(1, 20, TimeSpan.FromSeconds(15)),
        (id, delay, _) => _hangfire!.Schedule(id, delay));

    [Benchmark(Description = "Hangfire client.Schedule, SchedulePollingInterval 1 s, 1 worker (InMemory)")]
    public double Hangfire_Schedule_Polling1s() => Measure(
        nameof(Hangfire_Schedule_Polling1s),
        BenchmarkSettings.Quick ? new(1, 10, HangfireShortPolling) : new(3, 100, HangfireShortPolling),
        (id, delay, _) => _hangfire!.Schedule(id, delay));

    [Benchmark(Description = "Hangfire client.Schedule, SchedulePollingInterval 0 (smallest accepted: polls back to back), 1 worker (InMemory)")]
    public double Hangfire_Schedule_Polling0_BackToBack() => Measure(
        nameof(Hangfire_Schedule_Polling0_BackToBack),
        InProcess,
        (id, delay, _) => _hangfire!.Schedule(id, delay));

    [Benchmark(Description = "Coravel scheduler: Schedule(job).EverySecond().When(due).Once() (1 s tick)")]
    public double Coravel_EverySecond_WhenDue_Once() => Measure(
        nameof(Coravel_EverySecond_WhenDue_Once),
        BenchmarkSettings.Quick ? new(1, 10, CoravelSchedulerHost.TickPeriod) : new(3, 100, CoravelSchedulerHost.TickPeriod),
        (id, _, due) => _coravel!.ScheduleOnceAt(() => _probe.Hit(id), due));

    private static long ToStopwatchTicks(TimeSpan span) => span.Ticks * Stopwatch.Frequency / TimeSpan.TicksPerSecond;

    /// <summary>Takes a row's samples; <paramref name="schedule"/> gets the job id, the delay and the due timestamp.</summary>
    private double Measure(string method, Plan plan, Action<int, TimeSpan, long> schedule)
    {
        var random = new Random(Seed);
        var timeout = (2 * plan.ArrivalSpread) + Delay + TimeSpan.FromSeconds(10);
        long wallStart = 0;
        var cpuStart = TimeSpan.Zero;
        for (int i = 0; i < plan.Warmups + plan.Samples; i++)
        {
            if (i == plan.Warmups)
            {
                Thread.Sleep(SettleAfterWarmUp);
                wallStart = Stopwatch.GetTimestamp();
                cpuStart = ProcessCpu.Used();
            }

            Thread.Sleep(IdleGap + (plan.ArrivalSpread * random.NextDouble()));
            // Drawn on every row, so that the rows' arrival points stay the same.
            var fraction = TimeSpan.FromTicks(random.NextInt64(TimeSpan.TicksPerMillisecond));
            var delay = plan.WholeMilliseconds ? Delay : Delay + fraction;
            _probe.Expect(i);
            long due = Stopwatch.GetTimestamp() + ToStopwatchTicks(delay);
            schedule(i, delay, due);
            long started = _probe.WaitForHit(timeout, method);
            if (i >= plan.Warmups)
            {
                Samples.Add((started - due) * 1000.0 / Stopwatch.Frequency);
            }
        }

        Samples.AddCpu(ProcessCpu.Used() - cpuStart, Stopwatch.GetElapsedTime(wallStart));
        Console.WriteLine($"// {method}: {Samples.Describe()}");
        var summary = Samples.Summarize();
        ResultStore.Write(ResultStore.Key(typeof(ScheduledLatenessBenchmarks), method), summary);
        return summary["p50_ms"];
    }

    /// <summary>
    /// How a row samples: warm-up samples (not recorded), recorded samples, the random arrival's range, and whether the
    /// delays are whole milliseconds (no random fraction).
    /// </summary>
    private readonly record struct Plan(int Warmups, int Samples, TimeSpan ArrivalSpread, bool WholeMilliseconds = false);

    private sealed class Config : ManualConfig
    {
        public Config()
        {
            AddColumn(
                new ResultColumn("samples", "Samples", "Samples: jobs measured (after the row's warm-up samples)", "N0"),
                new ResultColumn("min_ms", "Min [ms]", "Min [ms]: the earliest job's lateness (negative: it started before its due time)", "N3"),
                new ResultColumn("p50_ms", "P50 [ms]", "P50 [ms]: median lateness, the job's first line minus its due time (nearest rank)", "N3"),
                new ResultColumn("p95_ms", "P95 [ms]", "P95 [ms]: 95th percentile of the lateness (nearest rank)", "N3"),
                new ResultColumn("p99_ms", "P99 [ms]", "P99 [ms]: 99th percentile of the lateness (nearest rank; with 20 samples, the slowest)", "N3"),
                new ResultColumn("max_ms", "Max [ms]", "Max [ms]: the latest job's lateness", "N3"),
                new ResultColumn("early", "Early", "Early: samples whose job started before its due time", "N0"),
                new ResultColumn("cpu_core_percent", "CPU [% core]", "CPU [% core]: the process's CPU time over the measured samples (waits included; the benchmark thread blocks) as a share of one core", "N2"));
            HideColumns(Column.Mean, Column.Error, Column.StdDev, Column.Median, Column.Ratio, Column.RatioSD);
        }
    }
}
