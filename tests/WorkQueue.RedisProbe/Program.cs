using System.Diagnostics;
using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using StackExchange.Redis;
using WorkQueue;
using WorkQueue.AspNetCore;

namespace WorkQueue.RedisProbe;

/// <summary>
/// <c>dotnet WorkQueue.RedisProbe.dll &lt;scenario&gt; &lt;redis-port&gt;</c>: starts a host with <c>AddWorkQueue</c> and
/// <c>AddRedisWarmup</c>, starves this process's thread pool, runs one job that talks to Redis, and reports what happened
/// as <c>probe.key=value</c> lines. Scenarios: <c>sync-dedicated</c>, <c>sync-pool</c>, <c>async-dedicated</c>,
/// <c>async-pool</c> (<c>-pool</c> sets <c>DedicatedIoThreads = false</c>), <c>durable-dedicated</c> (a durable queue
/// enqueues, runs and acknowledges jobs while the pool is starved), and <c>flag-switched-off</c> and
/// <c>flag-switched-off-start-not-ready</c> (the flag is switched off behind the warm-up's back). Exit code 0 when the scenario ran to the end, whatever it found.
/// </summary>
internal static class Program
{
    // Redis's sync and async timeouts. With dedicated threads a generous one that a loaded machine never approaches;
    // without them the timeout is the expected outcome, so a short one only keeps the control quick.
    private static readonly TimeSpan DedicatedRedisTimeout = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan PoolRedisTimeout = TimeSpan.FromSeconds(3);
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(60);
    private const int SyncCalls = 5;
    private const int DurableJobs = 20;
    private const int KeyedDurableJobs = 5;
    private const string DurableQueue = "probe";
    private const int BlockedWorkItems = 300;

    // Runs on the process's main thread, which is not a pool thread: nothing here may need the pool once it is starved.
    private static int Main(string[] args)
    {
        if (args.Length >= 1 && args[0] is "canary-starved" or "canary-busy" or "canary-idle-on" or "canary-idle-off")
        {
            return CanaryScenarios.Run(args[0]);
        }

        if (args.Length != 2 || !int.TryParse(args[1], CultureInfo.InvariantCulture, out int port)
            || args[0] is not ("sync-dedicated" or "sync-pool" or "async-dedicated" or "async-pool" or "durable-dedicated" or "flag-switched-off" or "flag-switched-off-start-not-ready"))
        {
            Console.Error.WriteLine(
                "usage: WorkQueue.RedisProbe <sync-dedicated|sync-pool|async-dedicated|async-pool|durable-dedicated|flag-switched-off|flag-switched-off-start-not-ready> <redis-port>");
            return 2;
        }

        string scenario = args[0];
        bool dedicated = !scenario.EndsWith("-pool", StringComparison.Ordinal);
        using var host = BuildHost(
            port,
            dedicated,
            durable: scenario.StartsWith("durable", StringComparison.Ordinal),
            switchFlagOff: scenario.StartsWith("flag-switched-off", StringComparison.Ordinal),
            scenario.EndsWith("start-not-ready", StringComparison.Ordinal) ? RedisWarmupFailureMode.StartNotReady : RedisWarmupFailureMode.FailFast);
        try
        {
            host.StartAsync().GetAwaiter().GetResult();
        }
        catch (InvalidOperationException ex)
        {
            ProbeReport.Write("startup", "failed");
            ProbeReport.Write("startup.error", ex.Message);
            return 0;
        }

        ProbeReport.Write("startup", "ok");
        var health = host.Services.GetRequiredService<HealthCheckService>().CheckHealthAsync(r => r.Name == "redis-warmup").GetAwaiter().GetResult();
        ProbeReport.Write("ioThreads", health.Entries["redis-warmup"].Data.GetValueOrDefault("ioThreads"));
        ProbeReport.Write("flag", ConnectionMultiplexer.GetFeatureFlag("DedicatedThreads"));

        if (scenario == "durable-dedicated")
        {
            return RunDurable(host);
        }

        var queue = host.Services.GetRequiredService<IInMemoryWorkQueue>();
        var database = host.Services.GetRequiredService<IConnectionMultiplexer>().GetDatabase();
        string key = $"probe:{scenario}:{Environment.ProcessId}";
        database.StringSet(key, "before-starvation");

        var job = scenario.StartsWith("sync", StringComparison.Ordinal) ? new ProbeJob(SyncJob(database, key)) : new ProbeJob(AsyncJob(database, key));
        using (var starved = StarvedThreadPool.Start(BlockedWorkItems, Generous))
        {
            ProbeReport.Write("pool.maxWorkerThreads", starved.MaxWorkerThreads);
            ProbeReport.Write("pool.threads", ThreadPool.ThreadCount);
            ProbeReport.Write("pool.blocked", starved.Blocked);
            ProbeReport.Write("pool.pending", ThreadPool.PendingWorkItemCount);
            if (!job.Enqueue(queue))
            {
                ProbeReport.Write("job", "rejected");
                return 1;
            }

            // Proving that something does NOT happen needs a window: for the async control, twice the library's own
            // async timeout, by when it would have failed the call if it could. Everything else gets the generous one.
            var window = scenario == "async-pool" ? 2 * PoolRedisTimeout : Generous;
            ProbeReport.Write("job.endedWhileStarved", job.Ended.Wait(window));
            ProbeReport.Write("pool.pendingAtEnd", ThreadPool.PendingWorkItemCount);
        }

        ProbeReport.Write("job.endedAfterRelease", job.Ended.Wait(Generous));
        host.StopAsync().WaitAsync(Generous).GetAwaiter().GetResult();
        return 0;
    }

    /// <summary>
    /// Durable jobs while starved: each enqueue (without and with <see cref="JobOptions"/>) is waited for here (a kernel
    /// wait, no continuation), then every job must run and be acknowledged (the stream empties), all by the durable
    /// queue's own thread and the queue's workers.
    /// </summary>
    private static int RunDurable(IHost host)
    {
        var producer = host.Services.GetRequiredKeyedService<IWorkQueue>(DurableQueue);
        var countdown = host.Services.GetRequiredService<CountdownEvent>();
        var database = host.Services.GetRequiredService<IConnectionMultiplexer>().GetDatabase();
        string stream = $"probe{Environment.ProcessId}:{{{DurableQueue}}}:stream";

        // One job before the starvation, so what runs once per process (JIT, JSON metadata, script loading) is done.
        countdown.Reset(1);
        producer.EnqueueAsync<ProbeDurableHandler, ProbeDurableJob>(new ProbeDurableJob(-1)).AsTask().Wait(Generous);
        ProbeReport.Write("durable.warmedUp", countdown.Wait(Generous));
        countdown.Reset(DurableJobs + KeyedDurableJobs);
        using (var starved = StarvedThreadPool.Start(BlockedWorkItems, Generous))
        {
            ProbeReport.Write("pool.maxWorkerThreads", starved.MaxWorkerThreads);
            ProbeReport.Write("pool.threads", ThreadPool.ThreadCount);
            ProbeReport.Write("pool.blocked", starved.Blocked);
            ProbeReport.Write("pool.pending", ThreadPool.PendingWorkItemCount);
            int stored = 0;
            for (int i = 0; i < DurableJobs; i++)
            {
                if (producer.EnqueueAsync<ProbeDurableHandler, ProbeDurableJob>(new ProbeDurableJob(i)).AsTask().Wait(Generous))
                {
                    stored++;
                }
            }

            ProbeReport.Write("durable.storedWhileStarved", stored);

            // With JobOptions (an idempotency key): the EnqueueResult must come as the plain enqueue's id does, without
            // a continuation that waits for a pool thread.
            int keyed = 0;
            for (int i = 0; i < KeyedDurableJobs; i++)
            {
                var enqueue = producer.EnqueueAsync<ProbeDurableHandler, ProbeDurableJob>(new ProbeDurableJob(DurableJobs + i), new JobOptions { IdempotencyKey = $"probe-{i}" }).AsTask();
                if (enqueue.Wait(Generous) && enqueue.Result.Created)
                {
                    keyed++;
                }
            }

            ProbeReport.Write("durable.keyedStoredWhileStarved", keyed);
            ProbeReport.Write("job.endedWhileStarved", countdown.Wait(Generous));
            var deadline = Stopwatch.StartNew();
            while (database.StreamLength(stream) > 0 && deadline.Elapsed < Generous)
            {
                Thread.Sleep(10);
            }

            ProbeReport.Write("durable.streamLengthWhileStarved", database.StreamLength(stream));
            ProbeReport.Write("pool.pendingAtEnd", ThreadPool.PendingWorkItemCount);
        }

        ProbeReport.Write("job.endedAfterRelease", countdown.IsSet);
        host.StopAsync().WaitAsync(Generous).GetAwaiter().GetResult();
        return 0;
    }

    /// <summary>Blocking Redis calls from a WorkQueue worker (a dedicated thread, not a pool thread).</summary>
    private static Action<CancellationToken> SyncJob(IDatabase database, string key) => _ =>
    {
        ProbeReport.Write("job.onPoolThread", Thread.CurrentThread.IsThreadPoolThread);
        for (int i = 0; i < SyncCalls; i++)
        {
            var stopwatch = Stopwatch.StartNew();
            try
            {
                var value = database.StringGet(key);
                ProbeReport.Write($"sync.{i}", $"ok {value} {stopwatch.Elapsed.TotalMilliseconds.ToString("F2", CultureInfo.InvariantCulture)} ms");
            }
            catch (RedisTimeoutException ex)
            {
                ProbeReport.Write($"sync.{i}", $"{nameof(RedisTimeoutException)} after {stopwatch.Elapsed.TotalMilliseconds.ToString("F0", CultureInfo.InvariantCulture)} ms: {ex.Message}");
                return;
            }
        }
    };

    /// <summary>An async job that awaits several Redis calls; each await resumes on the worker's own context.</summary>
    private static Func<CancellationToken, ValueTask> AsyncJob(IDatabase database, string key) => async _ =>
    {
        int worker = Environment.CurrentManagedThreadId;
        ProbeReport.Write("job.onPoolThread", Thread.CurrentThread.IsThreadPoolThread);
        var stopwatch = Stopwatch.StartNew();
        try
        {
            await database.StringSetAsync(key, "1");
            AfterAwait(0, worker, stopwatch);
            await database.StringIncrementAsync(key);
            AfterAwait(1, worker, stopwatch);
            var value = await database.StringGetAsync(key);
            AfterAwait(2, worker, stopwatch);
            await database.HashSetAsync(key + ":hash", "value", value);
            AfterAwait(3, worker, stopwatch);
            ProbeReport.Write("async.value", value);
            ProbeReport.Write("async.deleted", await database.KeyDeleteAsync([key, key + ":hash"]));
            AfterAwait(4, worker, stopwatch);
        }
        catch (Exception ex)
        {
            ProbeReport.Write(
                "async.error",
                $"{ex.GetType().Name} poolThread={Thread.CurrentThread.IsThreadPoolThread} sameWorker={Environment.CurrentManagedThreadId == worker}: {ex.Message}");
        }
    };

    private static void AfterAwait(int index, int worker, Stopwatch stopwatch)
    {
        ProbeReport.Write(
            $"async.{index}",
            $"poolThread={Thread.CurrentThread.IsThreadPoolThread} sameWorker={Environment.CurrentManagedThreadId == worker} " +
            $"{stopwatch.Elapsed.TotalMilliseconds.ToString("F2", CultureInfo.InvariantCulture)} ms");
        stopwatch.Restart();
    }

    private static IHost BuildHost(int port, bool dedicated, bool durable, bool switchFlagOff, RedisWarmupFailureMode failureMode)
    {
        var redisTimeout = dedicated ? DedicatedRedisTimeout : PoolRedisTimeout;
        var builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Logging.AddSimpleConsole(o => o.SingleLine = true).SetMinimumLevel(LogLevel.Warning)
            .AddFilter("WorkQueue.AspNetCore.Redis", LogLevel.Information);
        var workQueue = builder.Services.AddWorkQueue(o =>
        {
            o.MinWorkers = 1;
            o.MaxWorkers = 1;
            o.AutoScale.Enabled = false;
        });
        if (durable)
        {
            workQueue.AddDurableQueue<ProbeDurableHandler, ProbeDurableJob>(
                DurableQueue,
                o =>
                {
                    o.MinWorkers = 1;
                    o.MaxWorkers = 1;
                    o.AutoScale.Enabled = false;
                },
                d => d.KeyPrefix = $"probe{Environment.ProcessId}");
            builder.Services.AddSingleton(new CountdownEvent(0));
        }

        builder.Services.AddRedisWarmup(o =>
        {
            o.Configuration = $"127.0.0.1:{port}";
            o.DedicatedIoThreads = dedicated;
            o.FailureMode = failureMode;
            o.SyncTimeout = redisTimeout;
            o.ConfigureRedis = configuration =>
            {
                configuration.AsyncTimeout = (int)redisTimeout.TotalMilliseconds;
                if (switchFlagOff)
                {
                    // Another component in the process switching the process-wide flag off after the warm-up turned it on.
                    ConnectionMultiplexer.SetFeatureFlag("DedicatedThreads", false);
                }
            };
        });
        return builder.Build();
    }
}
