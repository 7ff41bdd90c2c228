using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using WorkQueue.Benchmarks.Alternatives;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Scenario 11: what handing one job to an idle pool costs the process, in CPU time and in thread switches. Jobs arrive
/// one at a time with a gap, as callbacks do in a service that is not saturated, so the pool's threads are parked when
/// each job comes: the cost is the wake-ups, not the job (which only signals that it ran).
/// </summary>
/// <remarks>
/// Each operation: <c>Thread.Sleep(1)</c> (the gap), enqueue one job, block until the job has signalled (a wait that
/// does not spin). The control row does the gap and nothing else, so a row minus the control is what the hand-off costs.
/// CPU time and context switches (voluntary and involuntary, every thread of the process) come from <c>getrusage</c>
/// around each invocation of <see cref="JobsPerInvocation"/> operations; the columns show their medians per job.
/// Linux only (the columns read <c>getrusage(RUSAGE_SELF)</c>).
/// </remarks>
[Config(typeof(Config))]
public class HandOffCostBenchmarks
{
    /// <summary>The jobs (operations) per invocation.</summary>
    public const int JobsPerInvocation = 200;

    /// <summary>The idle threads waiting for work in each case.</summary>
    public const int Threads = 8;

    private static readonly TimeSpan JobTimeout = TimeSpan.FromSeconds(10);
    private static readonly List<(double CpuUs, double Voluntary, double Involuntary)> Invocations = [];

    private readonly Order _order = new(42);
    private readonly NonSpinningCounter _done = new();
    private WorkQueueHost? _workQueue;
    private SignalHandler? _handler;
    private BlockingCollectionConsumer<Order>? _blockingCollection;

    [GlobalSetup(Target = nameof(WorkQueue_IdleThreads))]
    public void SetupWorkQueue()
    {
        _handler = new SignalHandler(_done);
        _workQueue = WorkQueueHost.StartFixed(workers: Threads, capacity: 1_000);
        _workQueue.WaitForWorkers(Threads);
    }

    [GlobalSetup(Target = nameof(BlockingCollection_IdleThreads))]
    public void SetupBlockingCollection() =>
        _blockingCollection = new BlockingCollectionConsumer<Order>(Threads, capacity: 1_000, _ => _done.Release());

    [GlobalCleanup]
    public void Cleanup()
    {
        _workQueue?.Dispose();
        _blockingCollection?.Dispose();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = JobsPerInvocation, Description = "control: the gap only, no job")]
    public void Control_GapOnly() => Measure(nameof(Control_GapOnly), () => { });

    [Benchmark(OperationsPerInvoke = JobsPerInvocation, Description = "WorkQueue, 8 idle workers")]
    public void WorkQueue_IdleThreads() => Measure(nameof(WorkQueue_IdleThreads), () =>
    {
        if (!_workQueue!.Queue.TryEnqueue(_handler!, _order))
        {
            throw new InvalidOperationException("WorkQueue rejected the job.");
        }

        _done.Wait(JobTimeout, nameof(WorkQueue_IdleThreads));
    });

    [Benchmark(OperationsPerInvoke = JobsPerInvocation, Description = "BlockingCollection + 8 threads")]
    public void BlockingCollection_IdleThreads() => Measure(nameof(BlockingCollection_IdleThreads), () =>
    {
        _blockingCollection!.Add(_order);
        _done.Wait(JobTimeout, nameof(BlockingCollection_IdleThreads));
    });

    [Benchmark(OperationsPerInvoke = JobsPerInvocation, Description = "ThreadPool.UnsafeQueueUserWorkItem")]
    public void ThreadPool_QueueUserWorkItem() => Measure(nameof(ThreadPool_QueueUserWorkItem), () =>
    {
        ThreadPool.UnsafeQueueUserWorkItem(static done => done.Release(), _done, preferLocal: false);
        _done.Wait(JobTimeout, nameof(ThreadPool_QueueUserWorkItem));
    });

    private static void Measure(string method, Action job)
    {
        var before = Usage.Read();
        for (int i = 0; i < JobsPerInvocation; i++)
        {
            Thread.Sleep(1);
            job();
        }

        var used = Usage.Read() - before;
        Invocations.Add((used.CpuMicroseconds / JobsPerInvocation, (double)used.Voluntary / JobsPerInvocation, (double)used.Involuntary / JobsPerInvocation));
        ResultStore.Write(ResultStore.Key(typeof(HandOffCostBenchmarks), method), new Dictionary<string, double>
        {
            ["cpu_us_per_job"] = ProcessCpu.Median(Invocations.Select(i => i.CpuUs)),
            ["voluntary_per_job"] = ProcessCpu.Median(Invocations.Select(i => i.Voluntary)),
            ["involuntary_per_job"] = ProcessCpu.Median(Invocations.Select(i => i.Involuntary)),
            ["invocations"] = Invocations.Count,
        });
    }

    /// <summary>A counting wait that blocks without spinning first (a spin would be CPU the hand-off did not cost).</summary>
    private sealed class NonSpinningCounter
    {
        private readonly object _gate = new();
        private int _count;

        public void Release()
        {
            lock (_gate)
            {
                _count++;
                Monitor.Pulse(_gate);
            }
        }

        public void Wait(TimeSpan timeout, string what)
        {
            lock (_gate)
            {
                while (_count == 0)
                {
                    if (!Monitor.Wait(_gate, timeout))
                    {
                        throw new TimeoutException($"{what}: the job did not run within {timeout.TotalSeconds:0} s.");
                    }
                }

                _count--;
            }
        }
    }

    private sealed class SignalHandler(NonSpinningCounter done) : IJobHandler<Order>
    {
        public ValueTask ExecuteAsync(Order job, CancellationToken cancellationToken)
        {
            done.Release();
            return ValueTask.CompletedTask;
        }
    }

    /// <summary>The process's CPU time and context switches so far, every thread included (<c>getrusage(RUSAGE_SELF)</c>).</summary>
    private readonly record struct Usage(double CpuMicroseconds, long Voluntary, long Involuntary)
    {
        public static Usage operator -(Usage a, Usage b) => new(a.CpuMicroseconds - b.CpuMicroseconds, a.Voluntary - b.Voluntary, a.Involuntary - b.Involuntary);

        public static Usage Read()
        {
            // struct rusage on 64-bit Linux: ru_utime and ru_stime (timeval: seconds, microseconds), then 14 longs of
            // which ru_nvcsw and ru_nivcsw are the last two.
            Span<long> usage = stackalloc long[18];
            if (GetRUsage(0, ref MemoryMarshal.GetReference(usage)) != 0)
            {
                throw new InvalidOperationException($"getrusage failed: errno {Marshal.GetLastPInvokeError()}.");
            }

            double cpu = ((usage[0] + usage[2]) * 1e6) + usage[1] + usage[3];
            return new Usage(cpu, usage[16], usage[17]);
        }

        [DllImport("libc", EntryPoint = "getrusage", SetLastError = true)]
        private static extern int GetRUsage(int who, ref long usage);
    }

    private sealed class Config : ManualConfig
    {
        public Config()
        {
            AddColumn(
                new ResultColumn("cpu_us_per_job", "CPU [us]/job", "CPU [us]/job: the process's CPU time (user + kernel, every thread) per operation, gap included; median of the invocations"),
                new ResultColumn("voluntary_per_job", "Blocks/job", "Blocks/job: voluntary context switches (a thread blocked or slept: what the hand-off's protocol causes) of every thread of the process per operation, gap included; median of the invocations", "N2"),
                new ResultColumn("involuntary_per_job", "Preempted/job", "Preempted/job: involuntary context switches (a thread preempted: what other load on the cores causes) per operation; median of the invocations", "N2"));
        }
    }
}
