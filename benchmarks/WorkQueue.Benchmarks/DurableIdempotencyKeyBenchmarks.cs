using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Jobs;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Durable scenario D5: what idempotency keys cost a durable queue end to end, D1's goodput (enqueue -> stored in Redis
/// -> run -> acknowledged) with a unique key on every job against the same jobs without one, on one redis-server
/// (AOF everysec). A key is taken in the enqueue script (checked, stored, with the job) and released by the
/// acknowledgement's, so both ends are in the figure.
/// </summary>
/// <remarks>
/// D1's setup (<see cref="DurableThroughputBenchmarks"/>): <see cref="Producers"/> producers with
/// <see cref="InFlightPerProducer"/> awaited enqueues each, <see cref="Workers"/> fixed workers, one invocation a batch
/// of <see cref="Jobs"/>. The keyed row's keys are built before each iteration (<c>i{iteration}-{n}</c>, new every
/// iteration, since a key is released by an acknowledgement that may come after the job's signal) and every enqueue
/// must be answered <c>Created</c>. Redis's commands, script calls and CPU per job are recorded as in D1.
/// </remarks>
[MemoryDiagnoser]
[Config(typeof(Config))]
public class DurableIdempotencyKeyBenchmarks
{
    /// <summary>The jobs per invocation.</summary>
    public const int Jobs = 50_000;

    /// <summary>The concurrent producers.</summary>
    public const int Producers = 4;

    /// <summary>The awaited enqueues each producer keeps in flight.</summary>
    public const int InFlightPerProducer = 64;

    /// <summary>The fixed worker count.</summary>
    public const int Workers = 8;

    private static readonly TimeSpan BatchTimeout = TimeSpan.FromSeconds(120);

    private readonly Order _order = new(42);
    private RedisServerProcess? _redis;
    private DurableBenchHost? _host;
    private RedisCounters? _redisBefore;
    private readonly RedisPerJob _redisPerJob = new();
    private string[] _keys = [];
    private int _iteration;

    [GlobalSetup]
    public void Setup()
    {
        _redis = RedisServerProcess.Start("everysec");
        _host = DurableBenchHost.StartDurable(_redis, Workers);
    }

    [IterationSetup]
    public void BeforeIteration()
    {
        _iteration++;
        _keys = new string[Jobs];
        for (int i = 0; i < Jobs; i++)
        {
            _keys[i] = $"i{_iteration}-{i}";
        }

        _redisBefore = _redis!.ReadCounters();
    }

    [IterationCleanup(Target = nameof(NoKey))]
    public void AfterNoKey() => RecordRedis(nameof(NoKey));

    [IterationCleanup(Target = nameof(UniqueKey))]
    public void AfterUniqueKey() => RecordRedis(nameof(UniqueKey));

    [GlobalCleanup]
    public void Cleanup()
    {
        _host?.Dispose();
        _redis?.Dispose();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Jobs, Description = "durable EnqueueAsync(payload): no key")]
    public void NoKey() => Run(nameof(NoKey), _ => _host!.EnqueueAsync(_order));

    [Benchmark(OperationsPerInvoke = Jobs, Description = "durable EnqueueAsync(payload, new JobOptions { IdempotencyKey = unique })")]
    public void UniqueKey() => Run(nameof(UniqueKey), i => _host!.EnqueueAsync(_order, new JobOptions { IdempotencyKey = _keys[i] }));

    private void Run(string name, Func<int, ValueTask> enqueue)
    {
        var host = _host!;
        host.Signals.Countdown.Reset(Jobs);
        ConcurrentProducers.Run(Jobs, Producers, InFlightPerProducer, enqueue);
        host.Signals.Countdown.Wait(BatchTimeout, name);
    }

    private void RecordRedis(string method) =>
        _redisPerJob.Record(_redis!.ReadCounters() - _redisBefore!, Jobs, ResultStore.Key(typeof(DurableIdempotencyKeyBenchmarks), method));

    private sealed class Config : ManualConfig
    {
        public Config()
        {
            AddJob(Job.Default.WithInvocationCount(1).WithUnrollFactor(1).AsMutator());
            AddColumn(StatisticColumn.OperationsPerSecond);
            AddColumn(RedisPerJob.Columns());
        }
    }
}
