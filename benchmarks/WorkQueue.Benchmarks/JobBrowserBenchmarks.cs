using BenchmarkDotNet.Attributes;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// The in-memory job search (<see cref="IWorkQueue.FindJobsAsync(JobQuery, CancellationToken)"/>) over 1,000,000 retained finished jobs
/// (issue 20 item 4): one page of each kind of query, against the lookup of one job by id.
/// </summary>
/// <remarks>
/// <para>
/// The setup runs <see cref="RetainedJobs"/> tracked jobs to their end on a queue that keeps them all
/// (<see cref="WorkQueueOptions.MaxFinishedJobs"/> = <see cref="RetainedJobs"/>, retention 7 days): one in
/// <see cref="FailEvery"/> fails its only attempt with <c>gateway timeout for order {n}</c> and is dead-lettered, one in
/// <see cref="RefundEvery"/> runs on <see cref="RefundHandler"/>, the rest succeed on <see cref="OrderHandler"/>.
/// </para>
/// <para>
/// Rows: the id lookup (baseline); a page of 50 dead-lettered jobs (the per-state index: 50 jobs read); a page of 50
/// refunds by type text (one match in 1,000, so about 50,000 jobs read); and an error text found in no job, which reads
/// the whole scan limit (100,000 jobs) and returns a cursor: the worst page a text search can cost.
/// </para>
/// </remarks>
[MemoryDiagnoser]
public class JobBrowserBenchmarks
{
    /// <summary>The finished jobs the queue retains.</summary>
    public const int RetainedJobs = 1_000_000;

    /// <summary>One job in this many fails and is dead-lettered.</summary>
    public const int FailEvery = 100;

    /// <summary>One job in this many runs on the refund handler.</summary>
    public const int RefundEvery = 1_000;

    private static readonly JobQuery DeadLettered = new() { States = [JobState.DeadLettered], Limit = 50 };
    private static readonly JobQuery Refunds = new() { NameContains = nameof(RefundHandler), Limit = 50 };
    private static readonly JobQuery MissingError = new() { ErrorContains = "card declined", Limit = 50 };

    private WorkQueueHost _workQueue = null!;
    private string _middleId = string.Empty;

    [GlobalSetup]
    public void Setup()
    {
        _workQueue = WorkQueueHost.Start(o =>
        {
            o.MinWorkers = 2;
            o.MaxWorkers = 2;
            o.AutoScale.Enabled = false;
            o.Capacity = 100_000;
            o.Retry.MaxAttempts = 1;
            o.MaxFinishedJobs = RetainedJobs;
            o.FinishedJobRetention = TimeSpan.FromDays(7);
            o.DeadLetterCapacity = 100;
        });

        var orders = new OrderHandler();
        var refunds = new RefundHandler();
        var options = new JobOptions();
        for (int i = 0; i < RetainedJobs; i++)
        {
            var result = i % RefundEvery == 0
                ? _workQueue.Queue.EnqueueAsync(refunds, i, options)
                : _workQueue.Queue.EnqueueAsync(orders, i, options);
            string id = result.IsCompletedSuccessfully ? result.Result.JobId : result.AsTask().GetAwaiter().GetResult().JobId;
            if (i == RetainedJobs / 2)
            {
                _middleId = id;
            }
        }

        var deadline = DateTime.UtcNow.AddMinutes(5);
        while (_workQueue.Control.GetSnapshot().Totals.Unfinished > 0)
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException("The retained jobs did not all finish within 5 minutes.");
            }

            Thread.Sleep(10);
        }

        // Each row must do what it claims, or the figure means nothing.
        Check(GetById() is not null, "the middle job is found by id");
        Check(StateFilterPage().Jobs.Count == 50, "a page of 50 dead-lettered jobs");
        Check(TypeFilterPage().Jobs.Count == 50, "a page of 50 refunds");
        var missing = ErrorTextSearchPage();
        Check(missing.Jobs.Count == 0 && missing.Scanned == MissingError.ScanLimit && missing.Next is not null, "an error search reading the whole scan limit");
    }

    [GlobalCleanup]
    public void Cleanup() => _workQueue.Dispose();

    [Benchmark(Baseline = true)]
    public JobStatus? GetById() => Completed(_workQueue.Queue.GetJobAsync(_middleId));

    [Benchmark]
    public JobPage StateFilterPage() => Completed(_workQueue.Queue.FindJobsAsync(DeadLettered));

    [Benchmark]
    public JobPage TypeFilterPage() => Completed(_workQueue.Queue.FindJobsAsync(Refunds));

    [Benchmark]
    public JobPage ErrorTextSearchPage() => Completed(_workQueue.Queue.FindJobsAsync(MissingError));

    // An in-memory queue answers synchronously: reading the result directly keeps the figures comparable with the sync
    // calls measured before (no await machinery in the measurement).
    private static T Completed<T>(ValueTask<T> answer) =>
        answer.IsCompletedSuccessfully ? answer.Result : answer.AsTask().GetAwaiter().GetResult();

    private static void Check(bool condition, string what)
    {
        if (!condition)
        {
            throw new InvalidOperationException($"JobBrowserBenchmarks setup: expected {what}.");
        }
    }

    /// <summary>Succeeds, except one job in <see cref="FailEvery"/>, which fails with a text naming its order.</summary>
    public sealed class OrderHandler : IJobHandler<int>
    {
        public ValueTask ExecuteAsync(int payload, CancellationToken cancellationToken) =>
            payload % FailEvery == 1 ? throw new InvalidOperationException($"gateway timeout for order {payload}") : ValueTask.CompletedTask;
    }

    /// <summary>The rare job type the type filter looks for.</summary>
    public sealed class RefundHandler : IJobHandler<int>
    {
        public ValueTask ExecuteAsync(int payload, CancellationToken cancellationToken) => ValueTask.CompletedTask;
    }
}
