using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Jobs;
using Perfolizer.Mathematics.OutlierDetection;
using WorkQueue.Benchmarks.Alternatives;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Scenario 3: how soon a job starts after it is enqueued on an idle queue (one consumer, parked).
/// </summary>
/// <remarks>
/// Every iteration is one sample: <c>[IterationSetup]</c> leaves the consumer idle for <see cref="IdleGap"/>, then the
/// benchmark enqueues one job whose first action is to set a flag, and spins (yielding, never sleeping) until it sees
/// the flag. The time is therefore enqueue + wake-up + job start + one cache-line transfer back. Outliers are kept and
/// the table shows P50/P95/P99 across the samples.
/// <para>
/// Coravel's queue does not wake up on an enqueue: its timer consumes the queue once a second, so a job starts at the
/// next tick. Back-to-back samples would all land just after a tick and measure the worst case (about 1 s); its
/// iteration setup therefore also waits a random part of the interval, so each sample is an arrival at a random point
/// of the tick, as a real request's would be. Each of its samples takes about one second of wall-clock time.
/// </para>
/// </remarks>
[MemoryDiagnoser]
[Config(typeof(Config))]
public class WakeUpLatencyBenchmarks
{
    /// <summary>How long the consumer is left idle before each sample.</summary>
    public static readonly TimeSpan IdleGap = TimeSpan.FromMilliseconds(2);

    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(10);

    private readonly Order _order = new(42);
    private readonly StartSignal _started = new();
    private SleepPollingConsumer<Order>? _polling;
    private BlockingCollectionConsumer<Order>? _blockingCollection;
    private WorkQueueHost? _workQueue;
    private StartSignalHandler? _handler;
    private CoravelHost? _coravel;
    private Action? _coravelJob;
    private Random? _arrival;
    private HangfireHost? _hangfire;

    [GlobalSetup(Target = nameof(ConcurrentQueue_Sleep1msPolling))]
    public void SetupPolling() => _polling = new SleepPollingConsumer<Order>(threads: 1, sleepMilliseconds: 1, _ => _started.Set());

    [GlobalSetup(Target = nameof(BlockingCollection_DedicatedThread))]
    public void SetupBlockingCollection() =>
        _blockingCollection = new BlockingCollectionConsumer<Order>(threads: 1, capacity: 1_000, _ => _started.Set());

    [GlobalSetup(Target = nameof(WorkQueue_OneIdleWorker))]
    public void SetupWorkQueue()
    {
        _handler = new StartSignalHandler(_started);
        _workQueue = WorkQueueHost.StartFixed(workers: 1, capacity: 1_000);
        _workQueue.WaitForWorkers(1);
    }

    [GlobalSetup(Target = nameof(WorkQueue_OneIdleWorker_Spin))]
    public void SetupWorkQueueSpin()
    {
        _handler = new StartSignalHandler(_started);
        _workQueue = WorkQueueHost.StartFixed(workers: 1, capacity: 1_000, spinBeforeParking: true);
        _workQueue.WaitForWorkers(1);
    }

    [GlobalSetup(Target = nameof(Coravel_QueueTask))]
    public void SetupCoravel()
    {
        _coravel = CoravelHost.Start();
        _coravelJob = _started.Set;
        _arrival = new Random(Seed: 20261123);
    }

    [GlobalSetup(Target = nameof(Hangfire_OneIdleWorker))]
    public void SetupHangfire() => _hangfire = HangfireHost.Start(workers: 1, _ => _started.Set());

    [GlobalCleanup]
    public void Cleanup()
    {
        // The second figure of each sample (see StartSignal), for the log: BenchmarkDotNet's columns hold the first.
        if (_started.Describe(BenchmarkSettings.WakeUpSamples) is { } direct)
        {
            Console.WriteLine($"// {direct}");
        }

        _polling?.Dispose();
        _blockingCollection?.Dispose();
        _workQueue?.Dispose();
        _coravel?.Dispose();
        _hangfire?.Dispose();
    }

    [IterationSetup(Targets = [
        nameof(ConcurrentQueue_Sleep1msPolling), nameof(BlockingCollection_DedicatedThread), nameof(WorkQueue_OneIdleWorker),
        nameof(WorkQueue_OneIdleWorker_Spin), nameof(Hangfire_OneIdleWorker)])]
    public void LeaveIdle()
    {
        _started.Reset();
        Thread.Sleep(IdleGap);
    }

    [IterationSetup(Target = nameof(Coravel_QueueTask))]
    public void LeaveIdleUntilRandomPointOfTick()
    {
        _started.Reset();
        Thread.Sleep(IdleGap + TimeSpan.FromSeconds(CoravelHost.ConsummationDelaySeconds * _arrival!.NextDouble()));
    }

    [Benchmark(Baseline = true, Description = "ConcurrentQueue + Sleep(1) polling thread")]
    public void ConcurrentQueue_Sleep1msPolling()
    {
        _started.MarkEnqueue();
        _polling!.Enqueue(_order);
        _started.SpinUntilSet(StartTimeout, nameof(ConcurrentQueue_Sleep1msPolling));
    }

    [Benchmark(Description = "BlockingCollection + thread")]
    public void BlockingCollection_DedicatedThread()
    {
        _started.MarkEnqueue();
        _blockingCollection!.Add(_order);
        _started.SpinUntilSet(StartTimeout, nameof(BlockingCollection_DedicatedThread));
    }

    [Benchmark(Description = "WorkQueue, 1 idle worker")]
    public void WorkQueue_OneIdleWorker() => EnqueueAndWaitForStart(nameof(WorkQueue_OneIdleWorker));

    [Benchmark(Description = "WorkQueue, 1 idle worker, SpinBeforeParking = true")]
    public void WorkQueue_OneIdleWorker_Spin() => EnqueueAndWaitForStart(nameof(WorkQueue_OneIdleWorker_Spin));

    [Benchmark(Description = "Coravel IQueue.QueueTask, 1 s consummation")]
    public void Coravel_QueueTask()
    {
        _started.MarkEnqueue();
        _coravel!.Queue.QueueTask(_coravelJob!);
        _started.SpinUntilSet(StartTimeout, nameof(Coravel_QueueTask));
    }

    [Benchmark(Description = "Hangfire, 1 idle worker (InMemory)")]
    public void Hangfire_OneIdleWorker()
    {
        _started.MarkEnqueue();
        _hangfire!.Enqueue(42);
        _started.SpinUntilSet(StartTimeout, nameof(Hangfire_OneIdleWorker));
    }

    private void EnqueueAndWaitForStart(string name)
    {
        _started.MarkEnqueue();
        if (!_workQueue!.Queue.TryEnqueue(_handler!, _order))
        {
            throw new InvalidOperationException("WorkQueue rejected the job.");
        }

        _started.SpinUntilSet(StartTimeout, name);
    }

    private sealed class Config : ManualConfig
    {
        public Config()
        {
            // One sample per iteration (the iteration setup idles the consumer), many iterations, outliers kept: the
            // tail is the point. This mutates whatever job the command line chose.
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
