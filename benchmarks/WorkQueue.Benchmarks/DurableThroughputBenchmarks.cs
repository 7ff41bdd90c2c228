using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Jobs;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Durable scenario D1: goodput of trivial durable jobs end to end (enqueue -> stored in Redis -> run -> acknowledged),
/// from several concurrent producers, on a redis-server with the append-only file on, per <see cref="AppendFsync"/>
/// policy (with the default ended-job records, and without them); beside it the in-memory queue, Hangfire on Redis
/// storage with the same worker count, BullMQ on the same redis-server at several Worker concurrencies, with single
/// adds and with bulk adds, and the durable queue with replica acknowledgements (one local replica). One invocation
/// enqueues a batch and returns when the last job of it has run; <c>OperationsPerInvoke</c> is the batch, so <c>Op/s</c>
/// is jobs accepted and completed per second.
/// </summary>
/// <remarks>
/// <para>
/// Each benchmark process starts its own redis-server (<see cref="RedisServerProcess"/>). The WorkQueue rows have
/// <see cref="Producers"/> producers on the thread pool, each with up to <see cref="InFlightPerProducer"/> awaited
/// enqueues in flight (<see cref="ConcurrentProducers"/>). Hangfire's client is synchronous (an enqueue returns once
/// the storage has the job), so its producers are <see cref="Producers"/> threads with one enqueue in flight each; its
/// goodput is bounded by its workers, not by its producers (see benchmarks/README.md). Hangfire runs in a child process
/// (<see cref="HangfireRedisProcess"/>): its storage needs StackExchange.Redis 2.x. The in-memory row does not touch
/// Redis and repeats under each <see cref="AppendFsync"/> value as that group's baseline.
/// </para>
/// <para>
/// BullMQ runs in a Node.js child process (<see cref="BullMqProcess"/>, the script in <c>benchmarks/bullmq-agent/</c>):
/// a <c>Queue</c> its producers add to and a <c>Worker</c> whose concurrency the row names (1, 8 or 64, whatever
/// <see cref="Workers"/> says), in the same process, as one service would run them. Its <see cref="Producers"/>
/// producers are async loops in the child's event loop with up to <see cref="InFlightPerProducer"/> adds awaited each,
/// as WorkQueue's are: that many <c>queue.add</c> calls, or one <c>queue.addBulk</c> of that many jobs. Completed jobs
/// are kept 10 minutes (<c>removeOnComplete: { age: 600 }</c>), as WorkQueue keeps its records of successes by default.
/// </para>
/// <para>
/// The Redis rows also record what Redis did per job over every invocation of the process: the commands it ran
/// (those inside scripts included), the script calls (round trips of the durable queue's store) and its CPU time.
/// </para>
/// <para>
/// <see cref="WorkQueue_Durable_ReplicaAcknowledged"/> runs the durable row against a primary with one replica on
/// loopback (both with the AOF on, same policy; <see cref="RedisServerProcess.StartReplica"/>) and
/// <c>DurableQueueOptions.ReplicaAcknowledgements = 1</c>: each round of enqueues is followed by a <c>WAIT 1</c>, so
/// beside <see cref="WorkQueue_Durable"/> it shows what waiting for the replica costs (a replica on the same machine
/// shares its cores: a lower bound of the goodput, not of the latency a remote replica adds). The primary's counters
/// include the <c>WAIT</c>s (<c>cmdstat_wait</c>).
/// </para>
/// </remarks>
[MemoryDiagnoser]
[Config(typeof(Config))]
public class DurableThroughputBenchmarks
{
    /// <summary>The jobs per invocation of the WorkQueue rows.</summary>
    public const int Jobs = 50_000;

    /// <summary>The jobs per invocation of the Hangfire row: fewer, as it runs about two orders of magnitude slower.</summary>
    public const int HangfireJobs = 5_000;

    /// <summary>
    /// The jobs per invocation of the BullMQ rows: fewer, as they run more than ten times slower (1,500 jobs/s in the dry
    /// run), and twelve processes of them run in all (the per-job figures do not depend on the batch).
    /// </summary>
    public const int BullMqJobs = 5_000;

    /// <summary>The concurrent producers.</summary>
    public const int Producers = 4;

    /// <summary>The awaited enqueues each WorkQueue producer keeps in flight.</summary>
    public const int InFlightPerProducer = 64;

    // A guard against a hang, not a measurement.
    private static readonly TimeSpan BatchTimeout = TimeSpan.FromSeconds(120);

    private readonly Order _order = new(42);
    private RedisServerProcess? _redis;
    private RedisServerProcess? _replica;
    private DurableBenchHost? _host;
    private HangfireRedisProcess? _hangfire;
    private BullMqProcess? _bullMq;
    private BullMqProcess.AddMode _bullMqMode;
    private string? _bullMqRow;
    private TimeSpan _bullMqCpuBefore;
    private RedisCounters? _redisBefore;
    private TimeSpan _cpuBefore;
    private readonly RedisPerJob _redisPerJob = new();

    /// <summary>Gets or sets the redis-server's <c>appendfsync</c> policy (the AOF is on in every Redis row).</summary>
    [Params("everysec", "always")]
    public string AppendFsync { get; set; } = "everysec";

    /// <summary>Gets or sets the worker count of every row (WorkQueue's fixed workers, Hangfire's <c>WorkerCount</c>).</summary>
    [Params(8)]
    public int Workers { get; set; }

    [GlobalSetup(Target = nameof(WorkQueue_InMemory))]
    public void SetupInMemory() => _host = DurableBenchHost.StartInMemory(Workers);

    [GlobalSetup(Target = nameof(WorkQueue_Durable))]
    public void SetupDurable()
    {
        _redis = RedisServerProcess.Start(AppendFsync);
        _host = DurableBenchHost.StartDurable(_redis, Workers);
    }

    [GlobalSetup(Target = nameof(WorkQueue_Durable_NoJobRecords))]
    public void SetupDurableNoJobRecords()
    {
        _redis = RedisServerProcess.Start(AppendFsync);
        _host = DurableBenchHost.StartDurable(_redis, Workers, o => o.FinishedJobRetention = TimeSpan.Zero);
    }

    [GlobalSetup(Target = nameof(WorkQueue_Durable_ReplicaAcknowledged))]
    public void SetupDurableReplicaAcknowledged()
    {
        _redis = RedisServerProcess.Start(AppendFsync);
        _replica = _redis.StartReplica();
        _host = DurableBenchHost.StartDurable(_redis, Workers, configure: null, d =>
        {
            d.ReplicaAcknowledgements = 1;
            d.ReplicaAcknowledgementTimeout = TimeSpan.FromSeconds(1);
        });
    }

    [GlobalSetup(Target = nameof(Hangfire_Redis))]
    public void SetupHangfire()
    {
        _redis = RedisServerProcess.Start(AppendFsync);
        _hangfire = HangfireRedisProcess.Start(_redis.Configuration, Workers);
    }

    [GlobalSetup(Target = nameof(BullMQ_Add_Concurrency1))]
    public void SetupBullMqAddConcurrency1() => StartBullMq(nameof(BullMQ_Add_Concurrency1), 1, BullMqProcess.AddMode.Add);

    [GlobalSetup(Target = nameof(BullMQ_Add_Concurrency8))]
    public void SetupBullMqAddConcurrency8() => StartBullMq(nameof(BullMQ_Add_Concurrency8), 8, BullMqProcess.AddMode.Add);

    [GlobalSetup(Target = nameof(BullMQ_Add_Concurrency64))]
    public void SetupBullMqAddConcurrency64() => StartBullMq(nameof(BullMQ_Add_Concurrency64), 64, BullMqProcess.AddMode.Add);

    [GlobalSetup(Target = nameof(BullMQ_AddBulk_Concurrency1))]
    public void SetupBullMqAddBulkConcurrency1() => StartBullMq(nameof(BullMQ_AddBulk_Concurrency1), 1, BullMqProcess.AddMode.AddBulk);

    [GlobalSetup(Target = nameof(BullMQ_AddBulk_Concurrency8))]
    public void SetupBullMqAddBulkConcurrency8() => StartBullMq(nameof(BullMQ_AddBulk_Concurrency8), 8, BullMqProcess.AddMode.AddBulk);

    [GlobalSetup(Target = nameof(BullMQ_AddBulk_Concurrency64))]
    public void SetupBullMqAddBulkConcurrency64() => StartBullMq(nameof(BullMQ_AddBulk_Concurrency64), 64, BullMqProcess.AddMode.AddBulk);

    [IterationSetup(Targets = [nameof(WorkQueue_Durable), nameof(WorkQueue_Durable_NoJobRecords), nameof(WorkQueue_Durable_ReplicaAcknowledged), nameof(Hangfire_Redis)])]
    public void ReadRedisBefore()
    {
        _redisBefore = _redis!.ReadCounters();
        _cpuBefore = ProcessCpu.Used();
    }

    [IterationSetup(Targets = [nameof(BullMQ_Add_Concurrency1), nameof(BullMQ_Add_Concurrency8), nameof(BullMQ_Add_Concurrency64),
        nameof(BullMQ_AddBulk_Concurrency1), nameof(BullMQ_AddBulk_Concurrency8), nameof(BullMQ_AddBulk_Concurrency64)])]
    public void ReadRedisAndAgentBefore()
    {
        _redisBefore = _redis!.ReadCounters();
        _bullMqCpuBefore = _bullMq!.CpuTime();
    }

    [IterationSetup(Target = nameof(WorkQueue_InMemory))]
    public void ReadCpuBefore() => _cpuBefore = ProcessCpu.Used();

    [IterationCleanup(Target = nameof(WorkQueue_InMemory))]
    public void ReadCpuAfterInMemory() =>
        _redisPerJob.Record(delta: null, ProcessCpu.Used() - _cpuBefore, Jobs, Key(nameof(WorkQueue_InMemory)));

    [IterationCleanup(Target = nameof(WorkQueue_Durable))]
    public void ReadRedisAfterDurable() => RecordRedis(nameof(WorkQueue_Durable), Jobs, appCpu: true);

    [IterationCleanup(Target = nameof(WorkQueue_Durable_NoJobRecords))]
    public void ReadRedisAfterDurableNoJobRecords() => RecordRedis(nameof(WorkQueue_Durable_NoJobRecords), Jobs, appCpu: true);

    [IterationCleanup(Target = nameof(WorkQueue_Durable_ReplicaAcknowledged))]
    public void ReadRedisAfterDurableReplicaAcknowledged() => RecordRedis(nameof(WorkQueue_Durable_ReplicaAcknowledged), Jobs, appCpu: true);

    // Hangfire's jobs run in its child process: this process's CPU is not theirs.
    [IterationCleanup(Target = nameof(Hangfire_Redis))]
    public void ReadRedisAfterHangfire() => RecordRedis(nameof(Hangfire_Redis), HangfireJobs, appCpu: false);

    // BullMQ's jobs, and its producers, run in its child process: the App CPU column is the child's CPU time.
    [IterationCleanup(Targets = [nameof(BullMQ_Add_Concurrency1), nameof(BullMQ_Add_Concurrency8), nameof(BullMQ_Add_Concurrency64),
        nameof(BullMQ_AddBulk_Concurrency1), nameof(BullMQ_AddBulk_Concurrency8), nameof(BullMQ_AddBulk_Concurrency64)])]
    public void ReadRedisAndAgentAfter()
    {
        var cpu = _bullMq!.CpuTime() - _bullMqCpuBefore;
        _redisPerJob.Record(_redis!.ReadCounters() - _redisBefore!, cpu, BullMqJobs, Key(_bullMqRow!));
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _host?.Dispose();
        _hangfire?.Dispose();
        _bullMq?.Dispose();
        _replica?.Dispose();
        _redis?.Dispose();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Jobs, Description = "WorkQueue in-memory queue (no Redis)")]
    public void WorkQueue_InMemory() => RunWorkQueueBatch(nameof(WorkQueue_InMemory));

    [Benchmark(OperationsPerInvoke = Jobs, Description = "WorkQueue durable queue (Redis Streams, AOF)")]
    public void WorkQueue_Durable() => RunWorkQueueBatch(nameof(WorkQueue_Durable));

    /// <summary>
    /// The durable row without the ended-job records a success writes by default (<c>FinishedJobRetention</c> zero): what
    /// those records cost, beside it in the same run.
    /// </summary>
    [Benchmark(OperationsPerInvoke = Jobs, Description = "WorkQueue durable queue, no job records (FinishedJobRetention 0)")]
    public void WorkQueue_Durable_NoJobRecords() => RunWorkQueueBatch(nameof(WorkQueue_Durable_NoJobRecords));

    /// <summary>
    /// The durable row on a primary with one replica, each enqueue completing once the replica has it
    /// (<c>ReplicaAcknowledgements = 1</c>, one <c>WAIT</c> per round of enqueues): what replica acknowledgements cost.
    /// </summary>
    [Benchmark(OperationsPerInvoke = Jobs, Description = "WorkQueue durable queue, 1 replica acknowledging each enqueue (WAIT)")]
    public void WorkQueue_Durable_ReplicaAcknowledged() => RunWorkQueueBatch(nameof(WorkQueue_Durable_ReplicaAcknowledged));

    [Benchmark(OperationsPerInvoke = HangfireJobs, Description = "Hangfire 1.8 on Redis storage (AOF)")]
    public void Hangfire_Redis() => _hangfire!.RunBatch(HangfireJobs, Producers);

    [Benchmark(OperationsPerInvoke = BullMqJobs, Description = "BullMQ 6.7 on Redis (AOF), add, Worker concurrency 1 (Node child process)")]
    public void BullMQ_Add_Concurrency1() => RunBullMqBatch();

    [Benchmark(OperationsPerInvoke = BullMqJobs, Description = "BullMQ 6.7 on Redis (AOF), add, Worker concurrency 8 (Node child process)")]
    public void BullMQ_Add_Concurrency8() => RunBullMqBatch();

    [Benchmark(OperationsPerInvoke = BullMqJobs, Description = "BullMQ 6.7 on Redis (AOF), add, Worker concurrency 64 (Node child process)")]
    public void BullMQ_Add_Concurrency64() => RunBullMqBatch();

    [Benchmark(OperationsPerInvoke = BullMqJobs, Description = "BullMQ 6.7 on Redis (AOF), addBulk, Worker concurrency 1 (Node child process)")]
    public void BullMQ_AddBulk_Concurrency1() => RunBullMqBatch();

    [Benchmark(OperationsPerInvoke = BullMqJobs, Description = "BullMQ 6.7 on Redis (AOF), addBulk, Worker concurrency 8 (Node child process)")]
    public void BullMQ_AddBulk_Concurrency8() => RunBullMqBatch();

    [Benchmark(OperationsPerInvoke = BullMqJobs, Description = "BullMQ 6.7 on Redis (AOF), addBulk, Worker concurrency 64 (Node child process)")]
    public void BullMQ_AddBulk_Concurrency64() => RunBullMqBatch();

    private void StartBullMq(string row, int concurrency, BullMqProcess.AddMode mode)
    {
        _bullMqRow = row;
        _bullMqMode = mode;
        _redis = RedisServerProcess.Start(AppendFsync);
        _bullMq = BullMqProcess.Start(_redis.Configuration, concurrency);
    }

    private void RunBullMqBatch() => _bullMq!.RunBatch(BullMqJobs, Producers, InFlightPerProducer, _bullMqMode);

    private void RunWorkQueueBatch(string name)
    {
        var host = _host!;
        host.Signals.Countdown.Reset(Jobs);
        ConcurrentProducers.Run(Jobs, Producers, InFlightPerProducer, _ => host.EnqueueAsync(_order));
        host.Signals.Countdown.Wait(BatchTimeout, name);
    }

    // Every invocation of the process (warm-ups included): the figures are per job and do not depend on timing.
    private void RecordRedis(string method, int jobsPerInvocation, bool appCpu)
    {
        // Read before Redis's counters: reading them is this process's work, not the jobs'.
        var cpu = ProcessCpu.Used() - _cpuBefore;
        _redisPerJob.Record(_redis!.ReadCounters() - _redisBefore!, appCpu ? cpu : null, jobsPerInvocation, Key(method));
    }

    private string Key(string method) => ResultStore.Key(typeof(DurableThroughputBenchmarks), method) + "." + AppendFsync;

    private sealed class Config : ManualConfig
    {
        public Config()
        {
            // One invocation (a whole batch) per iteration on every row: the Redis rows read Redis's counters around
            // each invocation, which makes BenchmarkDotNet run them so; the others follow, to stay in one group whose
            // Ratio column reads against the baseline.
            AddJob(Job.Default.WithInvocationCount(1).WithUnrollFactor(1).AsMutator());
            AddColumn(StatisticColumn.OperationsPerSecond);
            AddColumn(RedisPerJob.Columns(keySuffix: nameof(AppendFsync), appCpu: true));
        }
    }
}
