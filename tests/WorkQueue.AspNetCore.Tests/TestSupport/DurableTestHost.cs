using System.Collections.Concurrent;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using StackExchange.Redis;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.TestSupport;

/// <summary>The payload of the durable-queue tests.</summary>
public sealed record TestJob(int N, string? Tag = null);

/// <summary>What the durable tests' handler did, and what it should do: shared by every instance of one test.</summary>
public sealed class JobLog
{
    private readonly ConcurrentQueue<(TestJob Job, string Instance)> _runs = new();
    private readonly ConcurrentDictionary<int, int> _calls = new();
    private readonly Lock _lock = new();
    private readonly List<(Func<bool> Condition, TaskCompletionSource Signal)> _waiters = [];

    /// <summary>Gets or sets what a run does (after it is recorded as started); completes at once by default.</summary>
    public Func<TestJob, int, CancellationToken, ValueTask> Behavior { get; set; } = static (_, _, _) => ValueTask.CompletedTask;

    public IReadOnlyList<(TestJob Job, string Instance)> Runs => [.. _runs];

    public int Completed => _completedCount;

    private int _completedCount;

    public int CallsOf(int n) => _calls.TryGetValue(n, out int c) ? c : 0;

    public async ValueTask RunAsync(TestJob job, string instance, CancellationToken cancellationToken)
    {
        int call = _calls.AddOrUpdate(job.N, 1, static (_, c) => c + 1);
        _runs.Enqueue((job, instance));
        Notify();
        await Behavior(job, call, cancellationToken);
        Interlocked.Increment(ref _completedCount);
        Notify();
    }

    /// <summary>Completes when <paramref name="condition"/> holds (checked after every run), or fails after <paramref name="timeout"/>.</summary>
    public async Task WaitUntilAsync(Func<bool> condition, string what, TimeSpan? timeout = null)
    {
        var signal = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_lock)
        {
            _waiters.Add((condition, signal));
        }

        Notify();
        try
        {
            await signal.Task.WaitAsync(timeout ?? TimeSpan.FromSeconds(30));
        }
        catch (TimeoutException)
        {
            Assert.Fail($"Timed out waiting for: {what}. Runs: {_runs.Count}, completed: {_completedCount}.");
        }
    }

    private void Notify()
    {
        lock (_lock)
        {
            _waiters.RemoveAll(w =>
            {
                if (!w.Condition())
                {
                    return false;
                }

                w.Signal.TrySetResult();
                return true;
            });
        }
    }
}

/// <summary>The durable tests' handler: records the run in the shared <see cref="JobLog"/> and does what it says.</summary>
public sealed class TestJobHandler(JobLog log, InstanceName instance) : IJobHandler<TestJob>
{
    public ValueTask ExecuteAsync(TestJob payload, CancellationToken cancellationToken) => log.RunAsync(payload, instance.Value, cancellationToken);
}

/// <summary>Names one host of a test, so runs show which instance did them.</summary>
public sealed record InstanceName(string Value);

/// <summary>A generic host (no server) with a durable queue on a real redis-server: one instance of a service.</summary>
internal sealed class DurableTestHost : IAsyncDisposable
{
    public const string Queue = "jobs";

    private int _disposed;

    private DurableTestHost(IHost host)
    {
        Host = host;
    }

    public IHost Host { get; }

    public IServiceProvider Services => Host.Services;

    /// <summary>Gets the producer of the queue named <see cref="Queue"/> (the one the first <c>StartAsync</c> declares).</summary>
    public TestJobQueue Producer => new(Services.GetRequiredKeyedService<IWorkQueue>(Queue));

    public IWorkQueueControl Control => Services.GetRequiredService<IWorkQueueProvider>().Queues.Single(q => q.Name == Queue);

    public static async Task<DurableTestHost> StartAsync(
        RedisServer redis,
        JobLog log,
        string prefix,
        string instance = "a",
        Action<WorkQueueOptions>? configure = null,
        Action<DurableQueueOptions>? configureDurable = null,
        LogCapture? logs = null,
        string? connection = null,
        Action<HostApplicationBuilder>? configureHost = null)
    {
        var host = Build(redis, log, prefix, instance, configure, configureDurable, logs, connection, configureHost);
        await host.StartAsync();
        return new DurableTestHost(host);
    }

    public static IHost Build(
        RedisServer redis,
        JobLog log,
        string prefix,
        string instance = "a",
        Action<WorkQueueOptions>? configure = null,
        Action<DurableQueueOptions>? configureDurable = null,
        LogCapture? logs = null,
        string? connection = null,
        Action<HostApplicationBuilder>? configureHost = null)
    {
        var builder = NewBuilder(connection ?? redis.Configuration + Timeouts(configureDurable), instance, logs);
        builder.Services.AddSingleton(log);
        builder.Services.AddWorkQueue().AddDurableQueue<TestJobHandler, TestJob>(
            Queue,
            Engine(configure),
            Durable(prefix, configureDurable));
        configureHost?.Invoke(builder);
        return builder.Build();
    }

    /// <summary>The engine options of the durable tests' queues: 4 workers, then <paramref name="configure"/>.</summary>
    public static Action<WorkQueueOptions> Engine(Action<WorkQueueOptions>? configure = null) => o =>
    {
        o.MaxWorkers = 4;
        configure?.Invoke(o);
    };

    /// <summary>
    /// The durable options of the durable tests' queues: the test's key prefix and a 200 ms poll (so a scheduled job or a
    /// reclaim is seen within a test's waits), then <paramref name="configure"/>.
    /// </summary>
    public static Action<DurableQueueOptions> Durable(string prefix, Action<DurableQueueOptions>? configure = null) => d =>
    {
        d.PollInterval = TimeSpan.FromMilliseconds(200);
        d.KeyPrefix = prefix;
        configure?.Invoke(d);
    };

    /// <summary>
    /// Starts a host with the durable tests' common setup (no logging but <paramref name="logs"/>, the instance's name, the
    /// Redis warm-up on <paramref name="configuration"/>) whose queues and job types <paramref name="declare"/> adds, for
    /// tests that need more than the one queue <see cref="Queue"/> (several queues, several job types, a cluster).
    /// </summary>
    public static async Task<DurableTestHost> StartAsync(
        string configuration,
        string instance,
        Action<IWorkQueueBuilder> declare,
        Action<HostApplicationBuilder>? configureHost = null,
        LogCapture? logs = null)
    {
        var host = Build(configuration, instance, declare, configureHost, logs);
        try
        {
            await host.StartAsync();
        }
        catch
        {
            host.Dispose();
            throw;
        }

        return new DurableTestHost(host);
    }

    /// <summary>
    /// Builds, without starting, the host <c>StartAsync(configuration, instance, declare, …)</c> starts: for a test of what
    /// its start refuses.
    /// </summary>
    public static IHost Build(
        string configuration,
        string instance,
        Action<IWorkQueueBuilder> declare,
        Action<HostApplicationBuilder>? configureHost = null,
        LogCapture? logs = null)
    {
        var builder = NewBuilder(configuration, instance, logs);
        declare(builder.Services.AddWorkQueue());
        configureHost?.Invoke(builder);
        return builder.Build();
    }

    private static HostApplicationBuilder NewBuilder(string configuration, string instance, LogCapture? logs)
    {
        var builder = Microsoft.Extensions.Hosting.Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        if (logs is not null)
        {
            builder.Logging.AddProvider(logs);
        }

        builder.Services.AddSingleton(new InstanceName(instance));
        builder.Services.AddRedisWarmup(o => o.Configuration = configuration);
        return builder;
    }

    /// <summary>
    /// The Redis timeouts a test's claims allow (ClaimTimeout at least twice the heartbeat plus the longest timeout, as
    /// validated at startup): StackExchange.Redis's 5 s default unless the claims are shorter.
    /// </summary>
    private static string Timeouts(Action<DurableQueueOptions>? configureDurable)
    {
        var durable = new DurableQueueOptions();
        configureDurable?.Invoke(durable);
        long ms = Math.Min(5_000, (long)(durable.ClaimTimeout - (durable.HeartbeatInterval * 2)).TotalMilliseconds);
        return ms > 0 ? $",syncTimeout={ms},asyncTimeout={ms}" : string.Empty;
    }

    /// <summary>Gets a new key prefix, so tests sharing a redis-server never see each other's keys.</summary>
    public static string NewPrefix() => "t" + Guid.NewGuid().ToString("N")[..8];

    public static string StreamKey(string prefix) => $"{prefix}:{{{Queue}}}:stream";

    public static string DelayedKey(string prefix) => $"{prefix}:{{{Queue}}}:delayed";

    public static string DeadKey(string prefix) => $"{prefix}:{{{Queue}}}:dead";

    /// <summary>A direct connection for looking at (and tampering with) the queue's keys as another process would.</summary>
    public static async Task<ConnectionMultiplexer> ConnectAsync(RedisServer redis) =>
        await ConnectionMultiplexer.ConnectAsync(redis.Configuration + ",allowAdmin=true");

    /// <summary>
    /// Stops the host (10 s for its jobs and stores to finish) and disposes it; once only, so a test may dispose an instance
    /// midway (a restart, a host leaving) and still hold it in an <c>await using</c>.
    /// </summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 1)
        {
            return;
        }

        try
        {
            await Host.StopAsync(TimeSpan.FromSeconds(10));
        }
        finally
        {
            Host.Dispose();
        }
    }
}
