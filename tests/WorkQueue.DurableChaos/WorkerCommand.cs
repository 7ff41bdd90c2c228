using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using WorkQueue.AspNetCore;

namespace WorkQueue.DurableChaos;

/// <summary>
/// <c>worker --redis HOST:PORT --prefix P [--claim-timeout-ms 2000] [--heartbeat-ms 500] [--recurring]</c>: one consumer
/// of the chaos queue (and, with <c>--recurring</c>, one instance of the every-second recurring job on its own durable
/// queue), a generic host as a service would run it. It stops gracefully on SIGTERM (handing back what it prefetched) and
/// dies on SIGKILL, leaving its entries pending in Redis for the survivors to reclaim.
/// </summary>
internal static class WorkerCommand
{
    /// <summary>The line a worker prints once its host has started; the controller waits for it.</summary>
    public const string ReadyLine = "chaos.worker.ready";

    public static async Task<int> RunAsync(Arguments args)
    {
        string redis = args.Required("redis");
        var keys = new ChaosKeys(args.Required("prefix"));
        var claimTimeout = TimeSpan.FromMilliseconds(args.Int("claim-timeout-ms", 2000, min: 1000));
        var heartbeat = TimeSpan.FromMilliseconds(args.Int("heartbeat-ms", 500, min: 100));
        bool recurring = args.Flag("recurring");
        args.ThrowIfUnknown();

        var builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Logging.AddSimpleConsole(o =>
        {
            o.SingleLine = true;
            o.TimestampFormat = "HH:mm:ss.fff ";
        }).SetMinimumLevel(LogLevel.Warning).AddFilter("WorkQueue", LogLevel.Information);
        builder.Services.AddSingleton(keys);

        // A replacement may start while Redis restarts: it starts anyway and connects when Redis is back.
        builder.Services.AddRedisWarmup(o =>
        {
            o.Configuration = redis;
            o.FailureMode = RedisWarmupFailureMode.StartNotReady;
            o.SyncTimeout = RedisTimeout(claimTimeout, heartbeat);
        });
        var workQueue = builder.Services.AddWorkQueue().AddDurableQueue<ChaosJobHandler, ChaosJob>(
            ChaosKeys.Queue,
            o => ConfigureEngine(o),
            d =>
            {
                d.ClaimTimeout = claimTimeout;
                d.HeartbeatInterval = heartbeat;
                d.KeyPrefix = keys.Prefix;
            });
        if (recurring)
        {
            // Every worker registers the same every-second job: each occurrence must be enqueued once across them all.
            workQueue.AddDurableQueue<TickHandler, RecurringOccurrence>(
                ChaosKeys.TickQueue,
                o => ConfigureEngine(o),
                d =>
                {
                    d.ClaimTimeout = claimTimeout;
                    d.HeartbeatInterval = heartbeat;
                    d.KeyPrefix = keys.Prefix;
                })
                .AddRecurringJob<TickHandler>(ChaosKeys.TickJob, TimeSpan.FromSeconds(1), o => o.Queue = ChaosKeys.TickQueue);
        }

        using var host = builder.Build();
        await host.StartAsync();
        Console.Out.WriteLine($"{ReadyLine} pid={Environment.ProcessId}");
        Console.Out.Flush();
        await host.WaitForShutdownAsync();
        return 0;
    }

    /// <summary>
    /// The engine's settings, the same in every process of a run. Retries are generous so that a job whose completion
    /// could not be recorded while Redis restarts is retried until Redis is back, not dead-lettered.
    /// </summary>
    /// <summary>
    /// The Redis timeout the claims allow (ClaimTimeout at least twice the heartbeat plus the longest Redis timeout, as
    /// the queue validates at startup): StackExchange.Redis's 5 s default unless the claims are shorter.
    /// </summary>
    internal static TimeSpan RedisTimeout(TimeSpan claimTimeout, TimeSpan heartbeat) =>
        TimeSpan.FromMilliseconds(Math.Min(5_000, (claimTimeout - (heartbeat * 2)).TotalMilliseconds));

    public static void ConfigureEngine(WorkQueueOptions options)
    {
        options.MaxWorkers = 8;
        options.MaxConcurrency = 64;
        options.Retry.MaxAttempts = 10;
        options.Retry.BaseDelay = TimeSpan.FromMilliseconds(200);
        options.Retry.MaxDelay = TimeSpan.FromSeconds(2);
    }
}
