using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Jobs;
using Perfolizer.Mathematics.OutlierDetection;
using WorkQueue.AspNetCore;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Durable scenario D1b: how long one awaited enqueue takes, from the call to Redis (and, with
/// <see cref="DurableQueueOptions.ReplicaAcknowledgements"/>, the replica) having the job, per <see cref="AppendFsync"/>
/// policy. Both rows run against a primary with one replica on loopback, so the only difference between them is the
/// <c>WAIT</c> after the round.
/// </summary>
/// <remarks>
/// Every iteration is one sample: one producer, one enqueue in flight, waited for (blocking) until the store completes
/// it; the jobs run meanwhile on the queue's workers (their acknowledgements travel in the same rounds, as in a
/// service). D1 measures the throughput of many producers; this measures what one request waits for its enqueue.
/// Outliers are kept; the table shows P50/P95/P99.
/// </remarks>
[MemoryDiagnoser]
[Config(typeof(Config))]
public class DurableEnqueueLatencyBenchmarks
{
    /// <summary>The worker count of every row.</summary>
    public const int Workers = 8;

    private static readonly TimeSpan EnqueueTimeout = TimeSpan.FromSeconds(10);

    private readonly Order _order = new(42);
    private RedisServerProcess? _redis;
    private RedisServerProcess? _replica;
    private DurableBenchHost? _host;

    /// <summary>Gets or sets the redis-server's <c>appendfsync</c> policy (the AOF is on in both servers).</summary>
    [Params("everysec", "always")]
    public string AppendFsync { get; set; } = "everysec";

    [GlobalSetup(Target = nameof(WorkQueue_Durable_Replicated))]
    public void SetupReplicated() => Start(replicaAcknowledgements: 0);

    [GlobalSetup(Target = nameof(WorkQueue_Durable_ReplicaAcknowledged))]
    public void SetupReplicaAcknowledged() => Start(replicaAcknowledgements: 1);

    [GlobalCleanup]
    public void Cleanup()
    {
        _host?.Dispose();
        _replica?.Dispose();
        _redis?.Dispose();
    }

    [Benchmark(Baseline = true, Description = "WorkQueue durable queue, primary + 1 replica, enqueue answered once the primary has it")]
    public void WorkQueue_Durable_Replicated() => EnqueueAndWait(nameof(WorkQueue_Durable_Replicated));

    [Benchmark(Description = "WorkQueue durable queue, primary + 1 replica, enqueue answered once the replica has it (WAIT 1)")]
    public void WorkQueue_Durable_ReplicaAcknowledged() => EnqueueAndWait(nameof(WorkQueue_Durable_ReplicaAcknowledged));

    private void Start(int replicaAcknowledgements)
    {
        _redis = RedisServerProcess.Start(AppendFsync);
        _replica = _redis.StartReplica();
        _host = DurableBenchHost.StartDurable(_redis, Workers, configure: null, d =>
        {
            d.ReplicaAcknowledgements = replicaAcknowledgements;
            d.ReplicaAcknowledgementTimeout = TimeSpan.FromSeconds(1);
        });
    }

    private void EnqueueAndWait(string name)
    {
        // A replica that did not acknowledge in time fails the enqueue (EnqueueNotReplicatedException), and the run.
        if (!_host!.EnqueueAsync(_order).AsTask().Wait(EnqueueTimeout))
        {
            throw new TimeoutException($"{name}: an enqueue did not complete within {EnqueueTimeout}.");
        }
    }

    private sealed class Config : ManualConfig
    {
        public Config()
        {
            AddJob(Job.Default
                .WithInvocationCount(1)
                .WithUnrollFactor(1)
                .WithWarmupCount(BenchmarkSettings.Quick ? 5 : 50)
                .WithIterationCount(BenchmarkSettings.WakeUpSamples)
                .WithOutlierMode(OutlierMode.DontRemove)
                .AsMutator());
            AddColumn(StatisticColumn.P50, StatisticColumn.P95, new PercentileColumn(99), StatisticColumn.Max);
        }
    }
}
