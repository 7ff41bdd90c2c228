using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Jobs;
using Perfolizer.Mathematics.OutlierDetection;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Durable scenario D3: how soon a job starts after it is enqueued on an idle durable queue (enqueue -> stored in Redis
/// -> fetched -> started), per <see cref="AppendFsync"/> policy; beside it the in-memory queue and Hangfire on Redis.
/// </summary>
/// <remarks>
/// Every iteration is one sample, as in scenario 3: <c>[IterationSetup]</c> leaves the queue idle for
/// <see cref="IdleGap"/> (long enough for the previous job's acknowledgement to be written), then the benchmark calls
/// the enqueue and spins (yielding, never sleeping) until the job's first line has set a flag. The durable and
/// in-memory rows run the same handler, resolved from a new scope per job. Hangfire runs in a child process (its
/// storage needs StackExchange.Redis 2.x): its samples also carry one round trip over the child's stdin and stdout.
/// Outliers are kept; the table shows P50/P95/P99.
/// </remarks>
[MemoryDiagnoser]
[Config(typeof(Config))]
public class DurableWakeUpLatencyBenchmarks
{
    /// <summary>How long the queue is left idle before each sample.</summary>
    public static readonly TimeSpan IdleGap = TimeSpan.FromMilliseconds(20);

    /// <summary>The worker count of every row.</summary>
    public const int Workers = 8;

    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(10);

    private readonly Order _order = new(42);
    private RedisServerProcess? _redis;
    private DurableBenchHost? _host;
    private HangfireRedisProcess? _hangfire;
    private ValueTask _enqueue;

    /// <summary>Gets or sets the redis-server's <c>appendfsync</c> policy (the AOF is on in every Redis row).</summary>
    [Params("everysec", "always")]
    public string AppendFsync { get; set; } = "everysec";

    [GlobalSetup(Target = nameof(WorkQueue_InMemory))]
    public void SetupInMemory() => _host = DurableBenchHost.StartInMemory(Workers);

    [GlobalSetup(Target = nameof(WorkQueue_Durable))]
    public void SetupDurable()
    {
        _redis = RedisServerProcess.Start(AppendFsync);
        _host = DurableBenchHost.StartDurable(_redis, Workers);
    }

    [GlobalSetup(Target = nameof(Hangfire_Redis))]
    public void SetupHangfire()
    {
        _redis = RedisServerProcess.Start(AppendFsync);
        _hangfire = HangfireRedisProcess.Start(_redis.Configuration, Workers);
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _host?.Dispose();
        _hangfire?.Dispose();
        _redis?.Dispose();
    }

    [IterationSetup]
    public void LeaveIdle()
    {
        // The previous sample's enqueue, outside the measurement: a failed enqueue fails the benchmark.
        _enqueue.AsTask().Wait(StartTimeout);
        _enqueue = default;
        _host?.Signals.Started.Reset();
        Thread.Sleep(IdleGap);
    }

    [Benchmark(Baseline = true, Description = "WorkQueue in-memory queue, idle")]
    public void WorkQueue_InMemory() => EnqueueAndWaitForStart(nameof(WorkQueue_InMemory));

    [Benchmark(Description = "WorkQueue durable queue, idle (Redis Streams, AOF)")]
    public void WorkQueue_Durable() => EnqueueAndWaitForStart(nameof(WorkQueue_Durable));

    [Benchmark(Description = "Hangfire on Redis storage, idle (AOF; child process)")]
    public void Hangfire_Redis() => _hangfire!.WakeUp();

    private void EnqueueAndWaitForStart(string name)
    {
        // Its completion is checked in the next iteration's setup: the job may start before the durable enqueue's
        // completion reaches this thread, and the sample ends at the job's start.
        _enqueue = _host!.EnqueueAsync(_order);
        _host.Signals.Started.SpinUntilSet(StartTimeout, name);
    }

    private sealed class Config : ManualConfig
    {
        public Config()
        {
            AddJob(Job.Default
                .WithInvocationCount(1)
                .WithUnrollFactor(1)
                .WithWarmupCount(BenchmarkSettings.Quick ? 5 : 20)
                .WithIterationCount(BenchmarkSettings.WakeUpSamples)
                .WithOutlierMode(OutlierMode.DontRemove)
                .AsMutator());
            AddColumn(StatisticColumn.P50, StatisticColumn.P95, new PercentileColumn(99), StatisticColumn.Max);
        }
    }
}
