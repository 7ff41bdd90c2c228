using System.Diagnostics;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using WorkQueue.Benchmarks.Alternatives;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Scenario 4: the CPU time a process spends over a fixed window (<see cref="BenchmarkSettings.IdleWindow"/>, 10 s)
/// while it holds 64 idle consumers and no work arrives. Not a micro-benchmark: each benchmark runs once per process.
/// </summary>
/// <remarks>
/// The consumers are created in <c>[GlobalSetup]</c> and given time to settle, so thread start-up is not counted. The
/// benchmark then reads <see cref="Process.TotalProcessorTime"/> (all threads of the process, user + kernel), sleeps
/// for the window, and reads it again. The difference is what the "CPU ms" column shows; the BenchmarkDotNet time
/// columns would only show the window and are hidden. Every window measured in the process (the memory diagnoser
/// runs one more) is recorded, and the column shows their median.
/// <para>
/// Hangfire holds 64 workers (<c>WorkerCount = 64</c>). Coravel's queue has no worker count: its row is the idle cost
/// of its one timer-driven consumer, which is all it ever has. After the window, each peer must still run a probe job
/// (and Hangfire must still report 64 workers), so a stopped consumer cannot pass for a cheap one.
/// </para>
/// </remarks>
[MemoryDiagnoser]
[FixedWindowRun]
[Config(typeof(Config))]
public class IdleCpuBenchmarks
{
    /// <summary>The idle consumers each candidate holds.</summary>
    public const int Consumers = 64;

    private static readonly List<double> Windows = [];
    private static readonly TimeSpan ProbeTimeout = TimeSpan.FromSeconds(10);

    private readonly StartSignal _probe = new();
    private SleepPollingConsumer<Order>? _polling;
    private WorkQueueHost? _workQueue;
    private HangfireHost? _hangfire;
    private CoravelHost? _coravel;

    [GlobalSetup(Target = nameof(Poll1ms_64IdleThreads_ProcessCpuOverWindow))]
    public void SetupPolling1ms()
    {
        _polling = new SleepPollingConsumer<Order>(Consumers, sleepMilliseconds: 1, _ => { });
        Settle();
    }

    [GlobalSetup(Target = nameof(Poll5s_64IdleThreads_ProcessCpuOverWindow))]
    public void SetupPolling5s()
    {
        _polling = new SleepPollingConsumer<Order>(Consumers, sleepMilliseconds: 5_000, _ => { });
        Settle();
    }

    [GlobalSetup(Target = nameof(NoConsumers_ProcessCpuOverWindow))]
    public void SetupNothing() => Settle();

    [GlobalSetup(Target = nameof(WorkQueue_64IdleWorkers_ProcessCpuOverWindow))]
    public void SetupWorkQueue()
    {
        _workQueue = WorkQueueHost.StartFixed(Consumers, capacity: 1_000);
        _workQueue.WaitForWorkers(Consumers);
        Settle();
    }

    [GlobalSetup(Target = nameof(Hangfire_64IdleWorkers_ProcessCpuOverWindow))]
    public void SetupHangfire()
    {
        _hangfire = HangfireHost.Start(Consumers, _ => _probe.Set());
        Settle();
    }

    [GlobalSetup(Target = nameof(Coravel_IdleQueue_ProcessCpuOverWindow))]
    public void SetupCoravel()
    {
        _coravel = CoravelHost.Start();
        Settle();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _polling?.Dispose();
        _workQueue?.Dispose();
        _hangfire?.Dispose();
        _coravel?.Dispose();
    }

    [Benchmark(Baseline = true, Description = "64 threads polling a ConcurrentQueue, Sleep(1) when empty")]
    public double Poll1ms_64IdleThreads_ProcessCpuOverWindow() =>
        MeasureWindow(nameof(Poll1ms_64IdleThreads_ProcessCpuOverWindow), Consumers, () => _polling!.LiveThreads);

    [Benchmark(Description = "64 threads polling a ConcurrentQueue, Sleep(5000) when empty")]
    public double Poll5s_64IdleThreads_ProcessCpuOverWindow() =>
        MeasureWindow(nameof(Poll5s_64IdleThreads_ProcessCpuOverWindow), Consumers, () => _polling!.LiveThreads);

    [Benchmark(Description = "no consumers (control: the process's own floor)")]
    public double NoConsumers_ProcessCpuOverWindow() => MeasureWindow(nameof(NoConsumers_ProcessCpuOverWindow), 0, () => 0);

    [Benchmark(Description = "WorkQueue with 64 idle workers")]
    public double WorkQueue_64IdleWorkers_ProcessCpuOverWindow() =>
        MeasureWindow(nameof(WorkQueue_64IdleWorkers_ProcessCpuOverWindow), Consumers, () => _workQueue!.Control.GetSnapshot().Workers);

    [Benchmark(Description = "Hangfire server with 64 idle workers (InMemory)")]
    public double Hangfire_64IdleWorkers_ProcessCpuOverWindow() => MeasureWindow(
        nameof(Hangfire_64IdleWorkers_ProcessCpuOverWindow),
        Consumers,
        () =>
        {
            RunProbe(() => _hangfire!.Enqueue(42), "Hangfire");
            return _hangfire!.RegisteredWorkers();
        });

    [Benchmark(Description = "Coravel queue, idle (1 s consummation; one consumer, no worker count)")]
    public double Coravel_IdleQueue_ProcessCpuOverWindow() => MeasureWindow(
        nameof(Coravel_IdleQueue_ProcessCpuOverWindow),
        1,
        () =>
        {
            RunProbe(() => _coravel!.Queue.QueueTask(_probe.Set), "Coravel");
            return 1;
        });

    private static void Settle() => Thread.Sleep(BenchmarkSettings.Quick ? TimeSpan.FromMilliseconds(200) : TimeSpan.FromSeconds(1));

    private static TimeSpan ProcessCpuTime()
    {
        using var process = Process.GetCurrentProcess();
        return process.TotalProcessorTime;
    }

    private void RunProbe(Action enqueue, string what)
    {
        _probe.Reset();
        enqueue();
        _probe.SpinUntilSet(ProbeTimeout, $"{what}'s probe job after the idle window");
    }

    private static double MeasureWindow(string method, int consumers, Func<int> liveConsumers)
    {
        var window = BenchmarkSettings.IdleWindow;
        var before = ProcessCpuTime();
        Thread.Sleep(window);
        var cpu = ProcessCpuTime() - before;

        // A consumer that died would make the idle cost look cheaper than it is.
        int live = liveConsumers();
        if (live != consumers)
        {
            throw new InvalidOperationException($"{method}: {live} of {consumers} consumers are alive.");
        }

        Windows.Add(cpu.TotalMilliseconds);
        var sorted = Windows.Order().ToList();
        double median = sorted.Count % 2 == 1 ? sorted[sorted.Count / 2] : (sorted[(sorted.Count / 2) - 1] + sorted[sorted.Count / 2]) / 2;
        ResultStore.Write(ResultStore.Key(typeof(IdleCpuBenchmarks), method), new Dictionary<string, double>
        {
            ["window_s"] = window.TotalSeconds,
            ["cpu_ms"] = median,
            ["cpu_ms_max"] = sorted[^1],
            ["core_percent"] = 100 * median / window.TotalMilliseconds,
            ["windows"] = sorted.Count,
        });
        return cpu.TotalMilliseconds;
    }

    private sealed class Config : ManualConfig
    {
        public Config()
        {
            AddColumn(
                new ResultColumn("window_s", "Window [s]", "Window [s]: the length of each measured window"),
                new ResultColumn("cpu_ms", "CPU [ms]", "CPU [ms]: process CPU time (user + kernel) over one window; median of the windows measured in the process"),
                new ResultColumn("cpu_ms_max", "CPU max [ms]", "CPU max [ms]: the largest of the windows measured"),
                new ResultColumn("core_percent", "Core %", "Core %: CPU [ms] as a share of one core over the window", "N2"),
                new ResultColumn("cpu_ms", "CPU ratio", "CPU ratio: CPU [ms] / the baseline's CPU [ms]", "N3", ResultRatio.OverBaseline),
                new ResultColumn("windows", "Windows", "Windows: the number of windows measured in the process", "N0"));
            HideColumns(Column.Mean, Column.Error, Column.StdDev, Column.Median, Column.Ratio, Column.RatioSD);
        }
    }
}
