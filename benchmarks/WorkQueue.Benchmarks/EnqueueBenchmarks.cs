using System.Threading.Channels;
using BenchmarkDotNet.Attributes;
using WorkQueue.Benchmarks.Alternatives;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Scenario 1: the cost of one fire-and-forget enqueue (time and bytes per call), measured on the enqueuing thread.
/// </summary>
/// <remarks>
/// <para>
/// The queue-based candidates are measured with nobody consuming: the channels are not read during an iteration and the
/// WorkQueue is paused, so no job runs and no worker is woken while the enqueues are timed. Every iteration makes
/// <see cref="InvocationsPerIteration"/> calls into queues of capacity <see cref="Capacity"/>, so nothing ever fills up;
/// <c>[IterationCleanup]</c> then empties each queue (the WorkQueue by resuming it until every job has run) and checks
/// that every call was accepted, so a rejection can never pass for a fast enqueue.
/// </para>
/// <para>
/// The thread pool cannot be paused: its jobs (the same trivial counter increment) run on pool threads while the
/// enqueues are timed, which is the price of that option. The cleanup waits for all of them before the next iteration.
/// </para>
/// <para>
/// The peers are measured the same way, with nobody consuming: Coravel's queue without its hosted service started (the
/// cleanup runs the queued tasks with the method that service calls on each tick), and Hangfire as a client alone
/// (the cleanup starts a server, waits until every job has run, and stops it), as a web app that enqueues for a
/// separate Hangfire server does.
/// </para>
/// </remarks>
[MemoryDiagnoser]
[InvocationCount(InvocationsPerIteration, UnrollFactor)]
public class EnqueueBenchmarks
{
    /// <summary>The enqueues per iteration.</summary>
    public const int InvocationsPerIteration = 1 << 18;

    /// <summary>The bounded capacity of every queue, four times the enqueues per iteration.</summary>
    public const int Capacity = 1 << 20;

    /// <summary>The workers of the Hangfire server the cleanup starts to run an iteration's jobs (outside the measurement).</summary>
    public const int HangfireDrainWorkers = 4;

    private const int UnrollFactor = 16;
    private static readonly TimeSpan DrainTimeout = TimeSpan.FromSeconds(60);

    // Hangfire runs an iteration's 262,144 jobs through its storage one state change at a time: allow for it.
    private static readonly TimeSpan HangfireDrainTimeout = TimeSpan.FromMinutes(10);

    private readonly Order _order = new(42);
    private readonly JobCounter _executed = new();
    private Channel<Order> _channel = null!;
    private BackgroundTaskQueue _backgroundTaskQueue = null!;
    private WorkQueueHost _workQueue = null!;
    private CountingHandler _handler = null!;
    private CoravelHost _coravel = null!;
    private HangfireHost _hangfire = null!;
    private long _submitted;
    private long _acceptedBefore;

    [GlobalSetup]
    public void Setup()
    {
        // Same options as WorkQueue's own channel (bounded, Wait, multi-reader, multi-writer).
        _channel = Channel.CreateBounded<Order>(new BoundedChannelOptions(Capacity)
        {
            FullMode = BoundedChannelFullMode.Wait,
            SingleReader = false,
            SingleWriter = false,
            AllowSynchronousContinuations = false,
        });
        _backgroundTaskQueue = new BackgroundTaskQueue(Capacity);
        _handler = new CountingHandler(_executed);
        _workQueue = WorkQueueHost.StartFixed(workers: 1, Capacity);
        _workQueue.WaitForWorkers(1);
        _workQueue.Control.Pause();
        _coravel = CoravelHost.StartNotConsuming();
        _hangfire = HangfireHost.StartClientOnly(_ => _executed.Increment());
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _workQueue.Dispose();
        _coravel.Dispose();
        _hangfire.Dispose();
    }

    // Returns void on purpose: BenchmarkDotNet awaits a returned Task, which would time the job's round trip instead
    // of the enqueue.
    [Benchmark(Baseline = true, Description = "Task.Run fire-and-forget")]
    public void TaskRun()
    {
        _submitted++;
        var order = _order;
        _ = Task.Run(() => Handle(order));
    }

    [Benchmark(Description = "ThreadPool.UnsafeQueueUserWorkItem")]
    public bool ThreadPoolUnsafeQueueUserWorkItem()
    {
        _submitted++;
        return ThreadPool.UnsafeQueueUserWorkItem(static s => s.Self.Handle(s.Order), (Self: this, Order: _order), preferLocal: false);
    }

    [Benchmark(Description = "MS docs BackgroundTaskQueue (bounded Channel<Func<..>>)")]
    public void MsDocsBackgroundTaskQueue()
    {
        _submitted++;
        var order = _order;
        _backgroundTaskQueue.QueueBackgroundWorkItemAsync(_ =>
        {
            Handle(order);
            return default;
        }).GetAwaiter().GetResult();
    }

    [Benchmark(Description = "Channel<Order>.Writer.TryWrite (floor)")]
    public bool RawChannelTryWrite()
    {
        _submitted++;
        return _channel.Writer.TryWrite(_order);
    }

    [Benchmark(Description = "WorkQueue TryEnqueue(delegate)")]
    public bool WorkQueueDelegate()
    {
        _submitted++;
        var order = _order;
        return _workQueue.Queue.TryEnqueue(_ => Handle(order));
    }

    [Benchmark(Description = "WorkQueue TryEnqueue(handler, payload)")]
    public bool WorkQueueTypedPayload()
    {
        _submitted++;
        return _workQueue.Queue.TryEnqueue(_handler, _order);
    }

    [Benchmark(Description = "Coravel IQueue.QueueTask(action)")]
    public Guid CoravelQueueTask()
    {
        _submitted++;
        var order = _order;
        return _coravel.Queue.QueueTask(() => Handle(order));
    }

    [Benchmark(Description = "Hangfire BackgroundJobClient.Enqueue (InMemory storage)")]
    public string HangfireEnqueue()
    {
        _submitted++;
        return _hangfire.Enqueue(_order.Id);
    }

    [IterationCleanup(Targets = [nameof(TaskRun), nameof(ThreadPoolUnsafeQueueUserWorkItem)])]
    public void DrainThreadPool()
    {
        _executed.WaitFor(_submitted, DrainTimeout, "thread pool");
        ResetCounts();
    }

    [IterationCleanup(Target = nameof(MsDocsBackgroundTaskQueue))]
    public void DrainBackgroundTaskQueue() => CheckDrained(_backgroundTaskQueue.DiscardAll(), "BackgroundTaskQueue");

    [IterationCleanup(Target = nameof(RawChannelTryWrite))]
    public void DrainChannel()
    {
        long drained = 0;
        while (_channel.Reader.TryRead(out _))
        {
            drained++;
        }

        CheckDrained(drained, "channel");
    }

    [IterationCleanup(Targets = [nameof(WorkQueueDelegate), nameof(WorkQueueTypedPayload)])]
    public void DrainWorkQueue()
    {
        var queue = _workQueue.Control;
        queue.Resume();
        _executed.WaitFor(_submitted, DrainTimeout, "WorkQueue");
        queue.Pause();

        var totals = queue.GetSnapshot().Totals;
        if (totals.Rejected != 0 || totals.Enqueued - _acceptedBefore != _submitted)
        {
            throw new InvalidOperationException(
                $"WorkQueue accepted {totals.Enqueued - _acceptedBefore} of {_submitted} jobs ({totals.Rejected} rejected): the benchmark measured rejections.");
        }

        _acceptedBefore = totals.Enqueued;
        ResetCounts();
    }

    [IterationCleanup(Target = nameof(CoravelQueueTask))]
    public void DrainCoravel()
    {
        _coravel.ConsumeNow();
        CheckDrained(_executed.Count, "Coravel queue");
    }

    [IterationCleanup(Target = nameof(HangfireEnqueue))]
    public void DrainHangfire()
    {
        _hangfire.StartServer(HangfireDrainWorkers);
        _executed.WaitFor(_submitted, HangfireDrainTimeout, "Hangfire");
        _hangfire.StopServer();
        ResetCounts();
    }

    // The trivial job every candidate runs (the typed handler does the same): count it.
    private void Handle(Order order) => _executed.Increment();

    private void CheckDrained(long drained, string what)
    {
        if (drained != _submitted)
        {
            throw new InvalidOperationException($"The {what} held {drained} of {_submitted} items: the benchmark measured rejections.");
        }

        ResetCounts();
    }

    private void ResetCounts()
    {
        _submitted = 0;
        _executed.Reset();
    }
}
