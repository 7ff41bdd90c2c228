using System.Diagnostics;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using Microsoft.Extensions.Hosting;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Durable scenario D2: what an idle durable queue costs. Over a fixed window
/// (<see cref="BenchmarkSettings.DurableIdleWindow"/>, 60 s) with no job arriving: the process's CPU time, and the
/// commands its redis-server ran (<c>INFO commandstats</c> deltas, per second) and that server's CPU time. Not a
/// micro-benchmark: each benchmark runs once per process.
/// </summary>
/// <remarks>
/// <para>
/// Each process starts its own redis-server (AOF on, <c>appendfsync everysec</c>). The control is a host with only the
/// shared connection of <c>AddRedisWarmup</c>: StackExchange.Redis's own traffic and the process's floor, which the
/// durable queue's figures include too. Hangfire runs in a child process (its storage needs StackExchange.Redis 2.x);
/// its row's CPU time is the child's.
/// </para>
/// <para>
/// After the window each queue must still run a probe job, one of each job type (and Hangfire must still report its
/// workers), so a stopped consumer cannot pass for a cheap one; the probe is outside the window, and so is the
/// recompilation it sets off (<see cref="BenchmarkSettings.DurableIdleProbeSettle"/>). The allocations the window itself
/// saw are a column of their own: BenchmarkDotNet's <c>Allocated</c> covers the whole invocation, probe included.
/// </para>
/// </remarks>
[MemoryDiagnoser]
[FixedWindowRun]
[Config(typeof(Config))]
public class DurableIdleBenchmarks
{
    /// <summary>The worker count of the durable queue and of Hangfire's server.</summary>
    public const int Workers = 8;

    private static readonly List<(double Cpu, RedisCounters Redis, int Threads, double WorkingSetMb, double HeapMb, double AllocatedKb)> Windows = [];
    private static readonly TimeSpan ProbeTimeout = TimeSpan.FromSeconds(10);

    private readonly Order _order = new(42);
    private RedisServerProcess? _redis;
    private IHost? _connectionOnly;
    private DurableBenchHost? _durable;
    private ManyJobTypesBenchHost? _many;
    private HangfireRedisProcess? _hangfire;

    [GlobalSetup(Target = nameof(RedisConnectionOnly_Control))]
    public void SetupControl()
    {
        _redis = RedisServerProcess.Start("everysec");
        _connectionOnly = DurableBenchHost.StartConnectionOnly(_redis);
        Settle();
    }

    [GlobalSetup(Target = nameof(WorkQueue_Durable_IdleQueue))]
    public void SetupDurable()
    {
        _redis = RedisServerProcess.Start("everysec");
        _durable = DurableBenchHost.StartDurable(_redis, Workers);
        Settle();
    }

    [GlobalSetup(Target = nameof(WorkQueue_Durable_IdleQueue_ThirtyJobTypes))]
    public void SetupThirtyJobTypes()
    {
        _redis = RedisServerProcess.Start("everysec");
        _many = ManyJobTypesBenchHost.StartOneQueue(_redis, Workers);
        Settle();
    }

    [GlobalSetup(Target = nameof(WorkQueue_Durable_IdleQueue_OneJobType))]
    public void SetupOneJobType()
    {
        _redis = RedisServerProcess.Start("everysec");
        _many = ManyJobTypesBenchHost.StartOneQueue(_redis, Workers, types: 1);
        Settle();
    }

    [GlobalSetup(Target = nameof(WorkQueue_Durable_ThirtyIdleQueues))]
    public void SetupThirtyQueues()
    {
        _redis = RedisServerProcess.Start("everysec");
        _many = ManyJobTypesBenchHost.StartQueuePerType(_redis, Workers);
        Settle();
    }

    [GlobalSetup(Target = nameof(Hangfire_Redis_IdleServer))]
    public void SetupHangfire()
    {
        _redis = RedisServerProcess.Start("everysec");
        _hangfire = HangfireRedisProcess.Start(_redis.Configuration, Workers);
        Settle();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        if (_connectionOnly is not null)
        {
            _connectionOnly.StopAsync().GetAwaiter().GetResult();
            _connectionOnly.Dispose();
        }

        _durable?.Dispose();
        _many?.Dispose();
        _hangfire?.Dispose();
        _redis?.Dispose();
    }

    [Benchmark(Baseline = true, Description = "control: the shared Redis connection only (AddRedisWarmup), no queue")]
    public double RedisConnectionOnly_Control() =>
        MeasureWindow(nameof(RedisConnectionOnly_Control), ProcessCpuTime, probe: () => { });

    [Benchmark(Description = "WorkQueue durable queue, 8 idle workers")]
    public double WorkQueue_Durable_IdleQueue() => MeasureWindow(nameof(WorkQueue_Durable_IdleQueue), ProcessCpuTime, () =>
    {
        var signals = _durable!.Signals;
        signals.Started.Reset();
        _durable.EnqueueAsync(_order).AsTask().Wait(ProbeTimeout);
        signals.Started.SpinUntilSet(ProbeTimeout, "the durable queue's probe job after the idle window");
        if (_durable.Control.GetSnapshot().Workers != Workers)
        {
            throw new InvalidOperationException($"The durable queue has {_durable.Control.GetSnapshot().Workers} workers, expected {Workers}.");
        }
    });

    [Benchmark(Description = "WorkQueue durable queue carrying 1 job type declared as the 30-type row's, 8 idle workers")]
    public double WorkQueue_Durable_IdleQueue_OneJobType() =>
        MeasureWindow(nameof(WorkQueue_Durable_IdleQueue_OneJobType), ProcessCpuTime, () => ProbeMany(Workers));

    [Benchmark(Description = "WorkQueue durable queue carrying 30 job types, 8 idle workers")]
    public double WorkQueue_Durable_IdleQueue_ThirtyJobTypes() =>
        MeasureWindow(nameof(WorkQueue_Durable_IdleQueue_ThirtyJobTypes), ProcessCpuTime, () => ProbeMany(Workers));

    [Benchmark(Description = "WorkQueue, 30 durable queues of one job type each, 8 idle workers each")]
    public double WorkQueue_Durable_ThirtyIdleQueues() =>
        MeasureWindow(nameof(WorkQueue_Durable_ThirtyIdleQueues), ProcessCpuTime, () => ProbeMany(Workers * ManyJobTypesBenchHost.Count));

    [Benchmark(Description = "Hangfire on Redis storage, server with 8 idle workers (child process)")]
    public double Hangfire_Redis_IdleServer() => MeasureWindow(nameof(Hangfire_Redis_IdleServer), () => _hangfire!.CpuTime(), () =>
    {
        _hangfire!.WakeUp();
        if (_hangfire.RegisteredWorkers() != Workers)
        {
            throw new InvalidOperationException($"Hangfire reports {_hangfire.RegisteredWorkers()} workers, expected {Workers}.");
        }
    });

    private void ProbeMany(int workers)
    {
        _many!.Probe(ProbeTimeout);
        if (_many.Workers() != workers)
        {
            throw new InvalidOperationException($"The queues have {_many.Workers()} workers, expected {workers}.");
        }
    }

    private static void Settle() => Thread.Sleep(BenchmarkSettings.DurableIdleSettle);

    private static TimeSpan ProcessCpuTime()
    {
        using var process = Process.GetCurrentProcess();
        return process.TotalProcessorTime;
    }

    private static double Median(IEnumerable<double> values)
    {
        var sorted = values.Order().ToList();
        return sorted.Count % 2 == 1 ? sorted[sorted.Count / 2] : (sorted[(sorted.Count / 2) - 1] + sorted[sorted.Count / 2]) / 2;
    }

    private double MeasureWindow(string method, Func<TimeSpan> cpuTime, Action probe)
    {
        var window = BenchmarkSettings.DurableIdleWindow;
        var cpuBefore = cpuTime();
        var redisBefore = _redis!.ReadCounters();
        long allocatedBefore = GC.GetTotalAllocatedBytes(precise: true);
        Thread.Sleep(window);
        long allocated = GC.GetTotalAllocatedBytes(precise: true) - allocatedBefore;
        var redis = _redis.ReadCounters() - redisBefore;
        var cpu = cpuTime() - cpuBefore;
        using var self = Process.GetCurrentProcess();
        int threads = self.Threads.Count;
        double workingSetMb = self.WorkingSet64 / 1048576.0;
        double heapMb = GC.GetGCMemoryInfo().HeapSizeBytes / 1048576.0;   // as of the last collection: forcing one would show in the Gen columns

        // A consumer that died would make the idle cost look cheaper than it is.
        probe();

        // The probe's jobs get the enqueue and run path recompiled (tiered compilation, shortly after, on a background
        // thread): a one-off cost that grows with the probe (30 jobs of 30 types: about 570 methods and 300-450 ms of CPU
        // in the following 10 s; 1 job: about 90 methods and 65 ms), which the next window must not count.
        Thread.Sleep(BenchmarkSettings.DurableIdleProbeSettle);

        Windows.Add((cpu.TotalMilliseconds, redis, threads, workingSetMb, heapMb, allocated / 1024.0));
        Console.WriteLine($"// Redis commands over the {window.TotalSeconds:0} s window: {redis}");
        double seconds = window.TotalSeconds;
        ResultStore.Write(ResultStore.Key(typeof(DurableIdleBenchmarks), method), new Dictionary<string, double>
        {
            ["window_s"] = seconds,
            ["cpu_ms"] = Median(Windows.Select(w => w.Cpu)),
            ["core_percent"] = 100 * Median(Windows.Select(w => w.Cpu)) / window.TotalMilliseconds,
            ["redis_commands_per_s"] = Median(Windows.Select(w => w.Redis.Commands / seconds)),
            ["redis_scripts_per_s"] = Median(Windows.Select(w => w.Redis.Scripts / seconds)),
            ["redis_cpu_ms"] = Median(Windows.Select(w => w.Redis.CpuSeconds * 1000)),
            ["threads"] = Median(Windows.Select(w => (double)w.Threads)),
            ["working_set_mb"] = Median(Windows.Select(w => w.WorkingSetMb)),
            ["heap_mb"] = Median(Windows.Select(w => w.HeapMb)),
            ["window_allocated_kb"] = Median(Windows.Select(w => w.AllocatedKb)),
            ["windows"] = Windows.Count,
        });
        return cpu.TotalMilliseconds;
    }

    private sealed class Config : ManualConfig
    {
        public Config()
        {
            AddColumn(
                new ResultColumn("window_s", "Window [s]", "Window [s]: the length of each measured window"),
                new ResultColumn("cpu_ms", "CPU [ms]", "CPU [ms]: CPU time (user + kernel) of the process holding the queue over one window (Hangfire: its child process); median of the windows"),
                new ResultColumn("core_percent", "Core %", "Core %: CPU [ms] as a share of one core over the window", "N2"),
                new ResultColumn("redis_commands_per_s", "Redis cmds/s", "Redis cmds/s: commands redis-server ran per second, those inside Lua scripts included (INFO commandstats; the INFO calls that read it left out)", "N2"),
                new ResultColumn("redis_scripts_per_s", "Scripts/s", "Scripts/s: EVAL/EVALSHA calls per second (each one round trip)", "N2"),
                new ResultColumn("redis_cpu_ms", "Redis CPU [ms]", "Redis CPU [ms]: redis-server's CPU time over the window"),
                new ResultColumn("threads", "Threads", "Threads: the benchmark process's threads at the end of the window (Hangfire: this process, not its child)", "N0"),
                new ResultColumn("working_set_mb", "Working set [MB]", "Working set [MB]: the benchmark process's working set at the end of the window (Hangfire: this process, not its child)", "N1"),
                new ResultColumn("heap_mb", "GC heap [MB]", "GC heap [MB]: the managed heap as of the last collection before the end of the window (Hangfire: this process, not its child)", "N1"),
                new ResultColumn("window_allocated_kb", "Window alloc [KB]", "Window alloc [KB]: managed memory allocated by the benchmark process over one window (GC.GetTotalAllocatedBytes), median of the windows; BenchmarkDotNet's Allocated covers the whole invocation, the probe and the pause after it included (Hangfire: this process, not its child)", "N0"),
                new ResultColumn("windows", "Windows", "Windows: the number of windows measured in the process", "N0"));
            HideColumns(Column.Mean, Column.Error, Column.StdDev, Column.Median, Column.Ratio, Column.RatioSD);
        }
    }
}
