using System.Threading.Tasks.Dataflow;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using Microsoft.Extensions.Logging.Abstractions;
using WorkQueue.Benchmarks.Alternatives;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Scenario 2: end-to-end throughput of trivial jobs. One invocation enqueues <see cref="Jobs"/> jobs from the benchmark
/// thread and returns when the last of them has run; <c>OperationsPerInvoke</c> makes the result read per job, and the
/// <c>Op/s</c> column is jobs per second.
/// </summary>
/// <remarks>
/// Every job is the same: decrement a shared countdown (the last one sets an event). The raw channel and the docs'
/// <c>QueuedHostedService</c> have a single consumer by design, so <see cref="Workers"/> does not change them: they are
/// the same reference on every row. Coravel's queue has no worker count either (one consummation per tick of its
/// 1-second timer runs the queued tasks one after the other), so it too repeats on every row; a batch waits for the
/// next tick, which the result includes. Hangfire's server has <see cref="Workers"/> workers.
/// </remarks>
[MemoryDiagnoser]
[Config(typeof(Config))]
public class ThroughputBenchmarks
{
    /// <summary>The jobs per invocation.</summary>
    public const int Jobs = 10_000;

    /// <summary>The bounded capacity of every bounded candidate: a whole batch fits.</summary>
    public const int Capacity = Jobs;

    // A guard against a hang, not a measurement: generous, for Hangfire's storage round trips on a busy machine.
    private static readonly TimeSpan BatchTimeout = TimeSpan.FromSeconds(120);

    private readonly Order _order = new(42);
    private readonly JobCountdown _countdown = new();
    private ChannelConsumer<Order>? _channel;
    private BackgroundTaskQueue? _backgroundTaskQueue;
    private QueuedHostedService? _hostedService;
    private Func<CancellationToken, ValueTask>? _backgroundWorkItem;
    private SleepPollingConsumer<Order>? _polling;
    private BlockingCollectionConsumer<Order>? _blockingCollection;
    private ActionBlock<Order>? _actionBlock;
    private WorkQueueHost? _workQueue;
    private CountdownHandler? _handler;
    private CoravelHost? _coravel;
    private Action? _coravelJob;
    private HangfireHost? _hangfire;

    /// <summary>Gets or sets the number of consuming threads (workers, polling threads, degree of parallelism).</summary>
    [Params(1, 2, 8)]
    public int Workers { get; set; }

    [GlobalSetup(Target = nameof(RawChannel_SingleConsumer))]
    public void SetupChannel() => _channel = new ChannelConsumer<Order>(Capacity, _ => _countdown.Signal());

    [GlobalSetup(Target = nameof(MsDocs_QueuedHostedService_SingleConsumer))]
    public void SetupHostedService()
    {
        _backgroundTaskQueue = new BackgroundTaskQueue(Capacity);
        _hostedService = new QueuedHostedService(_backgroundTaskQueue, NullLogger<QueuedHostedService>.Instance);
        _hostedService.StartAsync(CancellationToken.None).GetAwaiter().GetResult();
        _backgroundWorkItem = _ =>
        {
            _countdown.Signal();
            return default;
        };
    }

    [GlobalSetup(Target = nameof(ConcurrentQueue_Sleep1msPolling))]
    public void SetupPolling() => _polling = new SleepPollingConsumer<Order>(Workers, sleepMilliseconds: 1, _ => _countdown.Signal());

    [GlobalSetup(Target = nameof(BlockingCollection_DedicatedThreads))]
    public void SetupBlockingCollection() =>
        _blockingCollection = new BlockingCollectionConsumer<Order>(Workers, Capacity, _ => _countdown.Signal());

    [GlobalSetup(Target = nameof(Dataflow_ActionBlock))]
    public void SetupActionBlock() => _actionBlock = new ActionBlock<Order>(
        _ => _countdown.Signal(),
        // An ActionBlock counts an item against BoundedCapacity until its delegate returns: up to Workers items of the
        // previous batch may still count when the countdown completes, so leave room for them.
        new ExecutionDataflowBlockOptions { MaxDegreeOfParallelism = Workers, BoundedCapacity = Capacity + Workers });

    [GlobalSetup(Target = nameof(WorkQueue_TypedPayload))]
    public void SetupWorkQueue()
    {
        _handler = new CountdownHandler(_countdown);
        _workQueue = WorkQueueHost.StartFixed(Workers, Capacity);
        _workQueue.WaitForWorkers(Workers);
    }

    [GlobalSetup(Target = nameof(WorkQueue_TypedPayload_Spin))]
    public void SetupWorkQueueSpin()
    {
        _handler = new CountdownHandler(_countdown);
        _workQueue = WorkQueueHost.StartFixed(Workers, Capacity, spinBeforeParking: true);
        _workQueue.WaitForWorkers(Workers);
    }

    [GlobalSetup(Target = nameof(WorkQueue_TypedPayload_TrackAllJobs))]
    public void SetupWorkQueueTracked()
    {
        _handler = new CountdownHandler(_countdown);
        _workQueue = WorkQueueHost.Start(o =>
        {
            o.MinWorkers = Workers;
            o.MaxWorkers = Workers;
            o.AutoScale.Enabled = false;
            o.Capacity = Capacity;
            o.TrackAllJobs = true;
        });
        _workQueue.WaitForWorkers(Workers);
    }

    [GlobalSetup(Target = nameof(Coravel_QueueTask_OneConsumer))]
    public void SetupCoravel()
    {
        _coravel = CoravelHost.Start();
        _coravelJob = _countdown.Signal;
    }

    [GlobalSetup(Target = nameof(Hangfire_BackgroundJobServer))]
    public void SetupHangfire() => _hangfire = HangfireHost.Start(Workers, _ => _countdown.Signal());

    [GlobalCleanup]
    public void Cleanup()
    {
        _channel?.Dispose();
        _hostedService?.StopAsync(CancellationToken.None).GetAwaiter().GetResult();
        _hostedService?.Dispose();
        _polling?.Dispose();
        _blockingCollection?.Dispose();
        if (_actionBlock is not null)
        {
            _actionBlock.Complete();
            _actionBlock.Completion.GetAwaiter().GetResult();
        }

        _workQueue?.Dispose();
        _coravel?.Dispose();
        _hangfire?.Dispose();
        _countdown.Dispose();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Jobs, Description = "raw Channel + 1 consumer (limit)")]
    public void RawChannel_SingleConsumer()
    {
        _countdown.Reset(Jobs);
        for (int i = 0; i < Jobs; i++)
        {
            if (!_channel!.TryWrite(_order))
            {
                throw new InvalidOperationException("The channel was full.");
            }
        }

        _countdown.Wait(BatchTimeout, nameof(RawChannel_SingleConsumer));
    }

    [Benchmark(OperationsPerInvoke = Jobs, Description = "MS docs QueuedHostedService (1 consumer)")]
    public void MsDocs_QueuedHostedService_SingleConsumer()
    {
        _countdown.Reset(Jobs);
        for (int i = 0; i < Jobs; i++)
        {
            _backgroundTaskQueue!.QueueBackgroundWorkItemAsync(_backgroundWorkItem!).GetAwaiter().GetResult();
        }

        _countdown.Wait(BatchTimeout, nameof(MsDocs_QueuedHostedService_SingleConsumer));
    }

    [Benchmark(OperationsPerInvoke = Jobs, Description = "ConcurrentQueue + Sleep(1) polling threads")]
    public void ConcurrentQueue_Sleep1msPolling()
    {
        _countdown.Reset(Jobs);
        for (int i = 0; i < Jobs; i++)
        {
            _polling!.Enqueue(_order);
        }

        _countdown.Wait(BatchTimeout, nameof(ConcurrentQueue_Sleep1msPolling));
    }

    [Benchmark(OperationsPerInvoke = Jobs, Description = "BlockingCollection + threads")]
    public void BlockingCollection_DedicatedThreads()
    {
        _countdown.Reset(Jobs);
        for (int i = 0; i < Jobs; i++)
        {
            _blockingCollection!.Add(_order);
        }

        _countdown.Wait(BatchTimeout, nameof(BlockingCollection_DedicatedThreads));
    }

    [Benchmark(OperationsPerInvoke = Jobs, Description = "Dataflow ActionBlock (MaxDegreeOfParallelism)")]
    public void Dataflow_ActionBlock()
    {
        _countdown.Reset(Jobs);
        for (int i = 0; i < Jobs; i++)
        {
            if (!_actionBlock!.Post(_order))
            {
                throw new InvalidOperationException("The ActionBlock declined the job.");
            }
        }

        _countdown.Wait(BatchTimeout, nameof(Dataflow_ActionBlock));
    }

    [Benchmark(OperationsPerInvoke = Jobs, Description = "WorkQueue TryEnqueue(handler, payload)")]
    public void WorkQueue_TypedPayload() => RunWorkQueueBatch(nameof(WorkQueue_TypedPayload));

    [Benchmark(OperationsPerInvoke = Jobs, Description = "WorkQueue, SpinBeforeParking = true")]
    public void WorkQueue_TypedPayload_Spin() => RunWorkQueueBatch(nameof(WorkQueue_TypedPayload_Spin));

    // Every job tracked (status, search, job browser): what WorkQueueOptions.TrackAllJobs costs per job, beside the row above it.
    [Benchmark(OperationsPerInvoke = Jobs, Description = "WorkQueue, TrackAllJobs = true")]
    public void WorkQueue_TypedPayload_TrackAllJobs() => RunWorkQueueBatch(nameof(WorkQueue_TypedPayload_TrackAllJobs));

    [Benchmark(OperationsPerInvoke = Jobs, Description = "Coravel IQueue.QueueTask (1 s consummation, 1 consumer)")]
    public void Coravel_QueueTask_OneConsumer()
    {
        _countdown.Reset(Jobs);
        var queue = _coravel!.Queue;
        for (int i = 0; i < Jobs; i++)
        {
            queue.QueueTask(_coravelJob!);
        }

        _countdown.Wait(BatchTimeout, nameof(Coravel_QueueTask_OneConsumer));
    }

    [Benchmark(OperationsPerInvoke = Jobs, Description = "Hangfire BackgroundJobServer (InMemory, WorkerCount)")]
    public void Hangfire_BackgroundJobServer()
    {
        _countdown.Reset(Jobs);
        var hangfire = _hangfire!;
        for (int i = 0; i < Jobs; i++)
        {
            hangfire.Enqueue(_order.Id);
        }

        _countdown.Wait(BatchTimeout, nameof(Hangfire_BackgroundJobServer));
    }

    private void RunWorkQueueBatch(string name)
    {
        _countdown.Reset(Jobs);
        var queue = _workQueue!.Queue;
        for (int i = 0; i < Jobs; i++)
        {
            if (!queue.TryEnqueue(_handler!, _order))
            {
                throw new InvalidOperationException("WorkQueue rejected the job.");
            }
        }

        _countdown.Wait(BatchTimeout, name);
    }

    private sealed class Config : ManualConfig
    {
        public Config() => AddColumn(StatisticColumn.OperationsPerSecond);
    }
}
