using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Scenario: I/O-bound async jobs. One invocation enqueues <see cref="Jobs"/> jobs that each await an I/O-like wait (a
/// 1 ms timer, standing for an outbound HTTP or database call) and returns when all of them have run;
/// <c>OperationsPerInvoke</c> makes the result read per job, and <c>Op/s</c> is jobs per second.
/// </summary>
/// <remarks>
/// Three ways to run them on dedicated threads: 2 threads with one job per thread (0.1's only behaviour, the baseline),
/// 2 threads with <see cref="WorkQueueOptions.MaxConcurrency"/> = <see cref="Concurrency"/> (an awaiting job holds no
/// thread), and one thread per concurrent job (what 0.1 needed for the same concurrency: <see cref="Concurrency"/>
/// threads). The thread count of each row is in its name.
/// </remarks>
[MemoryDiagnoser]
[Config(typeof(Config))]
public class AsyncIoBenchmarks
{
    /// <summary>The jobs per invocation.</summary>
    public const int Jobs = 2_000;

    /// <summary>The concurrent jobs the two concurrent candidates allow.</summary>
    public const int Concurrency = 200;

    private static readonly TimeSpan BatchTimeout = TimeSpan.FromSeconds(60);

    private readonly JobCountdown _countdown = new();
    private WorkQueueHost? _queue;
    private Func<CancellationToken, ValueTask>? _job;

    [GlobalSetup(Target = nameof(TwoThreads_OneJobPerThread))]
    public void SetupTwoThreads() => Setup(threads: 2, maxConcurrency: null);

    [GlobalSetup(Target = nameof(TwoThreads_MaxConcurrency200))]
    public void SetupTwoThreadsConcurrent() => Setup(threads: 2, maxConcurrency: Concurrency);

    [GlobalSetup(Target = nameof(ThreadPerJob_200Threads))]
    public void SetupThreadPerJob() => Setup(threads: Concurrency, maxConcurrency: null);

    [GlobalCleanup]
    public void Cleanup()
    {
        _queue?.Dispose();
        _countdown.Dispose();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Jobs, Description = "WorkQueue, 2 threads, one job per thread (0.1)")]
    public void TwoThreads_OneJobPerThread() => RunBatch(nameof(TwoThreads_OneJobPerThread));

    [Benchmark(OperationsPerInvoke = Jobs, Description = "WorkQueue, 2 threads, MaxConcurrency 200")]
    public void TwoThreads_MaxConcurrency200() => RunBatch(nameof(TwoThreads_MaxConcurrency200));

    [Benchmark(OperationsPerInvoke = Jobs, Description = "WorkQueue, 200 threads, one job per thread")]
    public void ThreadPerJob_200Threads() => RunBatch(nameof(ThreadPerJob_200Threads));

    private void Setup(int threads, int? maxConcurrency)
    {
        _queue = WorkQueueHost.Start(o =>
        {
            o.MinWorkers = threads;
            o.MaxWorkers = threads;
            o.MaxConcurrency = maxConcurrency;
            o.Capacity = Jobs;
            o.AutoScale.Enabled = false;
        });
        _queue.WaitForWorkers(threads);
        _job = async _ =>
        {
            await Task.Delay(1).ConfigureAwait(true);
            _countdown.Signal();
        };
    }

    private void RunBatch(string what)
    {
        _countdown.Reset(Jobs);
        var queue = _queue!.Queue;
        for (int i = 0; i < Jobs; i++)
        {
            if (!queue.TryEnqueue(_job!))
            {
                throw new InvalidOperationException($"{what}: job {i} was rejected.");
            }
        }

        _countdown.Wait(BatchTimeout, what);
    }

    private sealed class Config : ManualConfig
    {
        public Config() => AddColumn(StatisticColumn.OperationsPerSecond);
    }
}
