using System.Diagnostics;
using System.Globalization;
using Hangfire;
using Hangfire.Redis.StackExchange;

namespace WorkQueue.Benchmarks.HangfireRedis;

/// <summary>
/// Hangfire set up as its docs set it up, on Redis storage (Hangfire.Redis.StackExchange): the serializer settings of
/// the getting-started docs, <c>new RedisStorage(configuration, new RedisStorageOptions { Prefix = ... })</c> with every
/// other storage option at its default, a <see cref="BackgroundJobClient"/> and a <see cref="BackgroundJobServer"/>
/// with a fixed <see cref="BackgroundJobServerOptions.WorkerCount"/>.
/// </summary>
/// <remarks>
/// Unlike WorkQueue.Benchmarks' in-memory Hangfire host, finished jobs are kept as the storage keeps them by default
/// (a succeeded job expires after a day): that is what a user of Redis storage gets, and Redis expires keys cheaply.
/// </remarks>
public sealed class HangfireRedisAgent : IDisposable
{
    private static readonly TimeSpan BatchTimeout = TimeSpan.FromMinutes(10);
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);

    private readonly ManualResetEventSlim _done = new(false);
    private readonly ManualResetEventSlim _scheduledStarted = new(initialState: false, spinCount: 0);
    private int _expectedScheduled = int.MinValue;
    private long _scheduledStartedAt;
    private int _remaining;
    private volatile int _started;
    private RedisStorage? _storage;
    private BackgroundJobClient? _client;
    private BackgroundJobServer? _server;

    /// <summary>Creates the storage, the client and a server.</summary>
    /// <param name="configuration">The StackExchange.Redis configuration string.</param>
    /// <param name="workers">The server's worker count.</param>
    /// <param name="schedulePollingInterval">
    /// The server's <see cref="BackgroundJobServerOptions.SchedulePollingInterval"/>: how often its delayed-job scheduler
    /// looks for due jobs (15 s by default; zero, the smallest Hangfire accepts, polls back to back).
    /// </param>
    /// <returns>The reply.</returns>
    public string Start(string configuration, int workers, TimeSpan? schedulePollingInterval = null)
    {
        GlobalConfiguration.Configuration
            .SetDataCompatibilityLevel(CompatibilityLevel.Version_180)
            .UseSimpleAssemblyNameTypeSerializer()
            .UseRecommendedSerializerSettings();
        _storage = new RedisStorage(configuration, new RedisStorageOptions { Prefix = "hangfire:bench:" });
        _client = new BackgroundJobClient(_storage);
        var job = new BenchJob(OnJob);
        var options = new BackgroundJobServerOptions { WorkerCount = workers, Activator = new BenchJobActivator(job) };
        if (schedulePollingInterval is { } interval)
        {
            options.SchedulePollingInterval = interval;
        }

        _server = new BackgroundJobServer(options, _storage);
        return "ready";
    }

    /// <summary>Enqueues <paramref name="jobs"/> jobs from <paramref name="producers"/> threads and waits until all have run.</summary>
    /// <param name="jobs">The jobs in all.</param>
    /// <param name="producers">The producer threads, each enqueuing its share one job after the other.</param>
    /// <returns>The reply, with the time from the first enqueue to the last job's end.</returns>
    public string RunBatch(int jobs, int producers)
    {
        var client = _client ?? throw new InvalidOperationException("start first");
        _done.Reset();
        Volatile.Write(ref _remaining, jobs);
        long start = Stopwatch.GetTimestamp();

        // Hangfire's client is synchronous (Enqueue returns once the storage has the job): a producer is a thread.
        var threads = Enumerable.Range(0, producers).Select(p => new Thread(() =>
        {
            for (int i = p; i < jobs; i += producers)
            {
                int orderId = i;
                client.Enqueue<BenchJob>(j => j.Run(orderId));
            }
        })
        { IsBackground = true, Name = $"producer {p}" }).ToArray();
        foreach (var thread in threads)
        {
            thread.Start();
        }

        foreach (var thread in threads)
        {
            thread.Join();
        }

        if (!_done.Wait(BatchTimeout))
        {
            throw new TimeoutException($"{Volatile.Read(ref _remaining)} of {jobs} jobs still not run after {BatchTimeout.TotalMinutes:0} min.");
        }

        return string.Create(CultureInfo.InvariantCulture, $"done {Stopwatch.GetElapsedTime(start).TotalMilliseconds:F3}");
    }

    /// <summary>Enqueues one job on the idle server and spins (yielding) until it starts.</summary>
    /// <returns>The reply, with the time from the enqueue call to the job's start.</returns>
    public string WakeUp()
    {
        var client = _client ?? throw new InvalidOperationException("start first");
        _started = 0;
        Volatile.Write(ref _remaining, int.MaxValue);
        long start = Stopwatch.GetTimestamp();
        client.Enqueue<BenchJob>(j => j.Run(-1));
        var spinner = default(SpinWait);
        while (_started == 0)
        {
            spinner.SpinOnce(sleep1Threshold: -1);
            if (Stopwatch.GetElapsedTime(start) > StartTimeout)
            {
                throw new TimeoutException($"the job did not start within {StartTimeout.TotalSeconds:0} s.");
            }
        }

        return string.Create(CultureInfo.InvariantCulture, $"started {Stopwatch.GetElapsedTime(start).TotalMicroseconds:F1}");
    }

    /// <summary>
    /// Schedules one delayed job (<c>client.Schedule</c>, what <c>BackgroundJob.Schedule</c> does) due
    /// <paramref name="delay"/> from now, and blocks (it does not spin) until its first line has run.
    /// </summary>
    /// <param name="id">The job's argument; only the job with this id ends the wait.</param>
    /// <param name="delay">How long from now the job is due.</param>
    /// <param name="timeout">How long to wait for the job before failing.</param>
    /// <returns>
    /// The reply, with the lateness in milliseconds: the job's first line minus its due time, both read from this
    /// process's <see cref="Stopwatch"/> (the due time is the timestamp taken just before the call plus the delay).
    /// </returns>
    public string Schedule(int id, TimeSpan delay, TimeSpan timeout)
    {
        var client = _client ?? throw new InvalidOperationException("start first");
        _scheduledStarted.Reset();
        Volatile.Write(ref _scheduledStartedAt, 0);
        Volatile.Write(ref _expectedScheduled, id);
        long due = Stopwatch.GetTimestamp() + (delay.Ticks * Stopwatch.Frequency / TimeSpan.TicksPerSecond);
        client.Schedule<BenchJob>(j => j.Run(id), delay);
        if (!_scheduledStarted.Wait(timeout))
        {
            throw new TimeoutException($"scheduled job {id} did not start within {timeout.TotalSeconds:0} s.");
        }

        double lateness = (Volatile.Read(ref _scheduledStartedAt) - due) * 1000.0 / Stopwatch.Frequency;
        return string.Create(CultureInfo.InvariantCulture, $"late {lateness:F4}");
    }

    /// <summary>Gets the worker count the running servers registered in Redis (what the dashboard shows).</summary>
    /// <returns>The reply.</returns>
    public string RegisteredWorkers() =>
        string.Create(CultureInfo.InvariantCulture, $"workers {_storage!.GetMonitoringApi().Servers().Sum(s => s.WorkersCount)}");

    /// <summary>Stops the server (its workers finish their current job).</summary>
    public void Dispose()
    {
        _server?.Dispose();
        _done.Dispose();
        _scheduledStarted.Dispose();
    }

    private void OnJob(int orderId)
    {
        // The job's first line: the time is read before anything else.
        long now = Stopwatch.GetTimestamp();
        if (orderId == Volatile.Read(ref _expectedScheduled) && Interlocked.CompareExchange(ref _scheduledStartedAt, now, 0) == 0)
        {
            _scheduledStarted.Set();
        }

        _started = 1;
        if (Interlocked.Decrement(ref _remaining) == 0)
        {
            _done.Set();
        }
    }
}
