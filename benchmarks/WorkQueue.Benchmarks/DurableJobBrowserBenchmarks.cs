using BenchmarkDotNet.Attributes;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using StackExchange.Redis;
using WorkQueue.AspNetCore;
using WorkQueue.Benchmarks.Support;
using Order = WorkQueue.Benchmarks.Support.Order;

namespace WorkQueue.Benchmarks;

/// <summary>
/// The durable job search (<see cref="IWorkQueue.FindJobsAsync(JobQuery, CancellationToken)"/>) over
/// 1,000,000 retained succeeded jobs in a real redis-server (issue 20 item 4): one page of each kind of query, against
/// the lookup of one job by id.
/// </summary>
/// <remarks>
/// <para>
/// The setup does not run a million jobs: it writes their records and ended-list entries straight into Redis with a
/// pipelined script (<see cref="FillScript"/>, batches of <see cref="Batch"/>), in the exact format the store's
/// acknowledgement and dead-letter scripts write (a header of U+001F-separated fields: state, cancel asked, ended at,
/// attempt, enqueued at, consumer, started at, error; a field of the <c>ended</c> hash; a member of
/// <c>ended:S</c> or <c>ended:D</c> scored by the end). <see cref="RetainedJobs"/> succeeded jobs, plus
/// <see cref="DeadLetteredJobs"/> dead-lettered ones whose error is <c>gateway timeout for order {n}</c>. The queue
/// keeps them all (<see cref="WorkQueueOptions.MaxFinishedJobs"/> above their count, retention 7 days).
/// </para>
/// <para>
/// Rows: the id lookup (baseline); the newest page of 50 succeeded jobs; the page after 10 such pages (by cursor:
/// a score seek, not an offset); a page of 50 dead-lettered jobs; and an error text found in no job, which reads the
/// whole scan limit (<see cref="JobQuery.ScanLimit"/>, 100,000 entries, in ten script calls) and returns a cursor:
/// the worst page a text search can cost.
/// </para>
/// </remarks>
[MemoryDiagnoser]
public class DurableJobBrowserBenchmarks
{
    /// <summary>The succeeded jobs written to Redis.</summary>
    public const int RetainedJobs = 1_000_000;

    /// <summary>The dead-lettered jobs written to Redis.</summary>
    public const int DeadLetteredJobs = 10_000;

    /// <summary>The records one fill script call writes.</summary>
    public const int Batch = 5_000;

    /// <summary>The fill script calls in flight at once.</summary>
    public const int FillInFlight = 4;

    /// <summary>
    /// KEYS: ended list, ended hash. ARGV: state, first index, count, base (Unix ms), consumer, error root ('' for
    /// none). Writes records and list entries for jobs <c>{base + i}-0</c>, ended at <c>base + i</c>, as the store
    /// writes them.
    /// </summary>
    public const string FillScript = """
        local US = '\31'
        local first, count, base = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
        local listed, records = {}, {}
        for i = first, first + count - 1 do
          local at = string.format('%.0f', base + i)
          local job = at .. '-0'
          local err = ''
          if ARGV[6] ~= '' then err = ARGV[6] .. i end
          local rec = ARGV[1] .. US .. '' .. US .. at .. US .. '1' .. US .. string.format('%.0f', base + i - 5) .. US .. ARGV[5] .. US .. string.format('%.0f', base + i - 2) .. US .. err
          records[#records + 1] = job
          records[#records + 1] = rec
          listed[#listed + 1] = at
          listed[#listed + 1] = job
        end
        for i = 1, #listed, 1000 do
          redis.call('ZADD', KEYS[1], unpack(listed, i, math.min(i + 999, #listed)))
          redis.call('HSET', KEYS[2], unpack(records, i, math.min(i + 999, #records)))
        end
        return count
        """;

    private const string QueueName = "browse";
    private static readonly TimeSpan Retention = TimeSpan.FromDays(7);
    private static readonly JobQuery Newest = new() { States = [JobState.Succeeded], Limit = 50 };
    private static readonly JobQuery DeadLettered = new() { States = [JobState.DeadLettered], Limit = 50 };
    private static readonly JobQuery MissingError = new() { ErrorContains = "card declined", Limit = 50 };

    private RedisServerProcess _redis = null!;
    private IHost _host = null!;
    private IWorkQueue _queue = null!;
    private JobQuery _deep = null!;
    private string _middleId = string.Empty;

    [GlobalSetup]
    public void Setup()
    {
        _redis = RedisServerProcess.Start("everysec");
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Services.AddSingleton<OrderSignals>();
        builder.Services.AddRedisWarmup(o => o.Configuration = _redis.Configuration);
        builder.Services.AddWorkQueue().AddDurableQueue<SignalingOrderHandler, Order>(
            QueueName,
            o =>
            {
                o.MinWorkers = 1;
                o.MaxWorkers = 1;
                o.AutoScale.Enabled = false;
                o.MaxFinishedJobs = RetainedJobs + DeadLetteredJobs;
                o.FinishedJobRetention = Retention;
            },
            _ => { });
        _host = builder.Build();
        _host.Start();
        _queue = _host.Services.GetRequiredKeyedService<IWorkQueue>(QueueName);

        long baseMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - (2L * RetainedJobs);
        // The fill: 202 script calls of 5,000 records, at most FillInFlight at a time, so that no call waits behind the
        // others long enough to time out (a dry run with all of them in flight timed out at the 5 s default).
        var fill = ConfigurationOptions.Parse(_redis.Configuration);
        fill.AsyncTimeout = fill.SyncTimeout = (int)TimeSpan.FromMinutes(2).TotalMilliseconds;
        using (var redis = ConnectionMultiplexer.Connect(fill))
        {
            var db = redis.GetDatabase();
            string root = $"workqueue:{{{QueueName}}}:";
            var calls = new List<Func<Task>>();
            for (int first = 0; first < RetainedJobs; first += Batch)
            {
                int from = first;
                calls.Add(() => db.ScriptEvaluateAsync(FillScript, [root + "ended:S", root + "ended"], ["S", from, Batch, baseMs, "bench-consumer", string.Empty]));
            }

            for (int first = 0; first < DeadLetteredJobs; first += Batch)
            {
                int from = first;
                calls.Add(() => db.ScriptEvaluateAsync(FillScript, [root + "ended:D", root + "ended"], ["D", from, Batch, baseMs + RetainedJobs, "bench-consumer", "System.InvalidOperationException: gateway timeout for order "]));
            }

            for (int i = 0; i < calls.Count; i += FillInFlight)
            {
                if (!Task.WaitAll([.. calls.Skip(i).Take(FillInFlight).Select(call => call())], TimeSpan.FromMinutes(2)))
                {
                    throw new TimeoutException("DurableJobBrowserBenchmarks setup: a fill call took over 2 minutes.");
                }
            }
        }

        _middleId = $"{baseMs + (RetainedJobs / 2)}-0";
        string? cursor = null;
        for (int page = 0; page < 10; page++)
        {
            cursor = _queue.FindJobsAsync(new JobQuery { States = [JobState.Succeeded], Limit = 50, Cursor = cursor }).AsTask().GetAwaiter().GetResult().Next;
        }

        _deep = new JobQuery { States = [JobState.Succeeded], Limit = 50, Cursor = cursor };

        // Each row must do what it claims, or the figure means nothing.
        Check(GetById().GetAwaiter().GetResult() is { State: JobState.Succeeded }, "the middle job found by id, succeeded");
        Check(NewestSucceededPage().GetAwaiter().GetResult().Jobs.Count == 50, "a page of 50 succeeded jobs");
        Check(DeepSucceededPage().GetAwaiter().GetResult() is { Jobs.Count: 50 } deep && deep.Jobs[0].Id == $"{baseMs + RetainedJobs - 501}-0", "page 11 starting 500 jobs down");
        Check(DeadLetteredPage().GetAwaiter().GetResult() is { Jobs.Count: 50 } dead && dead.Jobs[0].LastError!.Contains("gateway timeout", StringComparison.Ordinal), "a page of 50 dead-lettered jobs with their errors");
        var missing = ErrorTextSearchPage().GetAwaiter().GetResult();
        Check(missing.Jobs.Count == 0 && missing.Scanned == MissingError.ScanLimit && missing.Next is not null, "an error search reading the whole scan limit");
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _host.StopAsync(TimeSpan.FromSeconds(10)).GetAwaiter().GetResult();
        _host.Dispose();
        _redis.Dispose();
    }

    [Benchmark(Baseline = true)]
    public Task<JobStatus?> GetById() => _queue.GetJobAsync(_middleId).AsTask();

    [Benchmark]
    public Task<JobPage> NewestSucceededPage() => _queue.FindJobsAsync(Newest).AsTask();

    [Benchmark]
    public Task<JobPage> DeepSucceededPage() => _queue.FindJobsAsync(_deep).AsTask();

    [Benchmark]
    public Task<JobPage> DeadLetteredPage() => _queue.FindJobsAsync(DeadLettered).AsTask();

    [Benchmark]
    public Task<JobPage> ErrorTextSearchPage() => _queue.FindJobsAsync(MissingError).AsTask();

    private static void Check(bool condition, string what)
    {
        if (!condition)
        {
            throw new InvalidOperationException($"DurableJobBrowserBenchmarks setup: expected {what}.");
        }
    }
}
