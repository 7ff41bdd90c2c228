using System.Diagnostics;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Scenario 5, the incident in miniature: while <see cref="JobsPerSecond"/> blocking jobs
/// (<c>Thread.Sleep(20)</c>) are submitted per second, how long does a <c>Task.Run</c> round trip (the stand-in for a
/// request) take? The jobs go through <c>Task.Run</c> (the incident) or through WorkQueue; a third case runs no jobs at
/// all, to show what the round trip costs on a quiet pool.
/// </summary>
/// <remarks>
/// <para>
/// Not a micro-benchmark: each case runs once, in its own process, for <see cref="BenchmarkSettings.BlockingWindow"/>
/// (5 s). A dedicated producer thread submits one job every 5 ms (catching up if it falls behind). The benchmark thread
/// meanwhile issues one request at a time: <c>Task.Run(no-op)</c>, waits for it, records the round trip, pauses 10 ms.
/// A request still pending when the window closes is waited for at most one more window and recorded as it stands.
/// </para>
/// <para>
/// The thread pool's minimum worker count is pinned to <see cref="PinnedMinPoolThreads"/> (the default on a 2-core
/// machine or container) for the case and restored afterwards, so the result does not depend on the core count of the
/// machine that runs it. The memory diagnoser is left out on purpose: it would run the whole window a second time in a
/// process whose pool has already grown.
/// </para>
/// <para>
/// The peers: Hangfire with <see cref="WorkQueueMaxWorkers"/> workers (its dedicated worker threads, the same cap as
/// WorkQueue's), and Coravel's queue, whose consummation runs the blocking tasks one after the other on one thread-pool
/// thread (so it falls behind: <c>Jobs done</c> shows by how much).
/// </para>
/// </remarks>
[FixedWindowRun]
[Config(typeof(Config))]
public class BlockingJobsBenchmarks
{
    /// <summary>The blocking jobs submitted per second.</summary>
    public const int JobsPerSecond = 200;

    /// <summary>How long each job blocks its thread, in milliseconds.</summary>
    public const int JobMilliseconds = 20;

    /// <summary>The thread pool's minimum worker threads during a case.</summary>
    public const int PinnedMinPoolThreads = 2;

    /// <summary>The WorkQueue's worker cap.</summary>
    public const int WorkQueueMaxWorkers = 16;

    private const int RequestPauseMilliseconds = 10;

    private readonly JobCounter _jobsDone = new();
    private WorkQueueHost? _workQueue;
    private HangfireHost? _hangfire;
    private CoravelHost? _coravel;
    private int _savedMinWorkers;
    private int _savedMinIo;
    private bool _pinned;
    private bool _recorded;

    [GlobalSetup]
    public void Setup()
    {
        if (_pinned)
        {
            return;
        }

        ThreadPool.GetMinThreads(out _savedMinWorkers, out _savedMinIo);
        _pinned = true;
        if (!ThreadPool.SetMinThreads(PinnedMinPoolThreads, _savedMinIo))
        {
            throw new InvalidOperationException($"Could not set the thread pool's minimum to {PinnedMinPoolThreads} worker threads.");
        }
    }

    [GlobalSetup(Target = nameof(RequestRoundTrip_BlockingJobsOnWorkQueue))]
    public void SetupWorkQueue()
    {
        Setup();

        // What a user would write: a cap, everything else default (1 worker to start, autoscaling on).
        _workQueue = WorkQueueHost.Start(o => o.MaxWorkers = WorkQueueMaxWorkers);
    }

    [GlobalSetup(Target = nameof(RequestRoundTrip_BlockingJobsOnHangfire))]
    public void SetupHangfire()
    {
        Setup();
        _hangfire = HangfireHost.Start(WorkQueueMaxWorkers, _ => BlockingJob());
    }

    [GlobalSetup(Target = nameof(RequestRoundTrip_BlockingJobsOnCoravel))]
    public void SetupCoravel()
    {
        Setup();
        _coravel = CoravelHost.Start();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        if (_pinned)
        {
            ThreadPool.SetMinThreads(_savedMinWorkers, _savedMinIo);
            _pinned = false;
        }

        if (_workQueue is not null)
        {
            // Let the backlog go rather than wait for it: the measurement is over.
            _workQueue.Control.StopAsync(TimeSpan.FromSeconds(2)).GetAwaiter().GetResult();
            _workQueue.Dispose();
        }

        // Stopping the server leaves the backlog in the (in-memory) storage once the running jobs finish.
        _hangfire?.Dispose();

        // Coravel's queue is not stopped: its hosted service would first run the whole backlog, one blocking task after
        // the other (tens of seconds). The measurement is over and the process exits after this cleanup.
    }

    [Benchmark(Baseline = true, Description = "request Task.Run while jobs go through Task.Run")]
    public void RequestRoundTrip_BlockingJobsOnTaskRun() => Run(
        nameof(RequestRoundTrip_BlockingJobsOnTaskRun),
        () =>
        {
            _ = Task.Run(BlockingJob);
            return true;
        });

    [Benchmark(Description = "request Task.Run while jobs go through WorkQueue")]
    public void RequestRoundTrip_BlockingJobsOnWorkQueue() => Run(
        nameof(RequestRoundTrip_BlockingJobsOnWorkQueue),
        () => _workQueue!.Queue.TryEnqueue(_ => BlockingJob()));

    [Benchmark(Description = "request Task.Run while jobs go through Hangfire")]
    public void RequestRoundTrip_BlockingJobsOnHangfire() => Run(
        nameof(RequestRoundTrip_BlockingJobsOnHangfire),
        () =>
        {
            _hangfire!.Enqueue(42);
            return true;
        });

    [Benchmark(Description = "request Task.Run while jobs go through Coravel IQueue")]
    public void RequestRoundTrip_BlockingJobsOnCoravel() => Run(
        nameof(RequestRoundTrip_BlockingJobsOnCoravel),
        () =>
        {
            _coravel!.Queue.QueueTask(BlockingJob);
            return true;
        });

    [Benchmark(Description = "request Task.Run, no jobs (control)")]
    public void RequestRoundTrip_NoBlockingJobs() => Run(nameof(RequestRoundTrip_NoBlockingJobs), submit: null);

    private static double Percentile(List<double> sorted, double percentile) =>
        sorted.Count == 0 ? double.NaN : sorted[Math.Min(sorted.Count - 1, (int)Math.Ceiling(percentile / 100 * sorted.Count) - 1)];

    private void BlockingJob()
    {
        Thread.Sleep(JobMilliseconds);
        _jobsDone.Increment();
    }

    private void Run(string method, Func<bool>? submit)
    {
        var window = BenchmarkSettings.BlockingWindow;
        long start = Stopwatch.GetTimestamp();
        long end = start + (long)(window.TotalSeconds * Stopwatch.Frequency);
        int submitted = 0;
        int rejected = 0;
        Thread? producer = null;
        if (submit is not null)
        {
            producer = new Thread(() => Produce(submit, start, end, ref submitted, ref rejected)) { IsBackground = true, Name = "JobProducer" };
            producer.Start();
        }

        var roundTrips = new List<double>();
        bool timedOut = false;
        while (Stopwatch.GetTimestamp() < end && !timedOut)
        {
            long requestStart = Stopwatch.GetTimestamp();
            var request = Task.Run(static () => { });
            timedOut = !request.Wait(window);
            roundTrips.Add(Stopwatch.GetElapsedTime(requestStart).TotalMicroseconds);
            Thread.Sleep(RequestPauseMilliseconds);
        }

        long jobsDoneInWindow = _jobsDone.Count;
        producer?.Join();
        if (_recorded)
        {
            // Only the first window of a process counts: a later one would start with a pool that has already grown.
            return;
        }

        _recorded = true;
        roundTrips.Sort();
        ResultStore.Write(ResultStore.Key(typeof(BlockingJobsBenchmarks), method), new Dictionary<string, double>
        {
            ["requests"] = roundTrips.Count,
            ["mean_us"] = roundTrips.Count == 0 ? double.NaN : roundTrips.Average(),
            ["p50_us"] = Percentile(roundTrips, 50),
            ["p99_us"] = Percentile(roundTrips, 99),
            ["max_us"] = roundTrips.Count == 0 ? double.NaN : roundTrips[^1],
            ["timed_out"] = timedOut ? 1 : 0,
            ["jobs_submitted"] = submitted,
            ["jobs_rejected"] = rejected,
            ["jobs_done"] = jobsDoneInWindow,
            ["pool_threads"] = ThreadPool.ThreadCount,
        });
    }

    private static void Produce(Func<bool> submit, long start, long end, ref int submitted, ref int rejected)
    {
        long interval = Stopwatch.Frequency / JobsPerSecond;
        for (long due = start; due < end; due += interval)
        {
            long wait = due - Stopwatch.GetTimestamp();
            if (wait > 0)
            {
                Thread.Sleep(TimeSpan.FromSeconds((double)wait / Stopwatch.Frequency));
            }

            if (submit())
            {
                submitted++;
            }
            else
            {
                rejected++;
            }
        }
    }

    private sealed class Config : ManualConfig
    {
        public Config()
        {
            AddColumn(
                new ResultColumn("requests", "Requests", "Requests: round trips measured in the window", "N0"),
                new ResultColumn("mean_us", "Mean [us]", "Mean [us]: mean request round trip"),
                new ResultColumn("p50_us", "P50 [us]", "P50 [us]: median request round trip (Task.Run of a no-op, from a dedicated thread)"),
                new ResultColumn("p99_us", "P99 [us]", "P99 [us]: 99th percentile request round trip"),
                new ResultColumn("max_us", "Max [us]", "Max [us]: slowest request round trip"),
                new ResultColumn("timed_out", "Timed out", "Timed out: 1 if the last request was still pending a whole window after the window closed", "N0"),
                new ResultColumn("p50_us", "P50 speed-up", "P50 speed-up: the baseline's P50 / this P50 (how many times faster a request is than with the jobs on Task.Run)", "N1", ResultRatio.BaselineOverThis),
                new ResultColumn("p99_us", "P99 speed-up", "P99 speed-up: the baseline's P99 / this P99", "N1", ResultRatio.BaselineOverThis),
                new ResultColumn("mean_us", "Mean speed-up", "Mean speed-up: the baseline's mean / this mean", "N1", ResultRatio.BaselineOverThis),
                new ResultColumn("jobs_submitted", "Jobs submitted", "Jobs submitted: blocking jobs accepted during the window", "N0"),
                new ResultColumn("jobs_done", "Jobs done", "Jobs done: blocking jobs finished by the end of the window", "N0"),
                new ResultColumn("jobs_rejected", "Jobs rejected", "Jobs rejected: submissions the queue refused (should be 0)", "N0"),
                new ResultColumn("pool_threads", "Pool threads", "Pool threads: ThreadPool.ThreadCount after the window", "N0"));
            HideColumns(Column.Mean, Column.Error, Column.StdDev, Column.Median, Column.Ratio, Column.RatioSD);
        }
    }
}
