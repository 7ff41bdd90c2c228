using Hangfire;
using Hangfire.InMemory;
using Hangfire.Server;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// Hangfire set up the way its docs set it up, with Hangfire.InMemory storage: a <see cref="BackgroundJobClient"/>
/// that enqueues fire-and-forget jobs and, unless the client runs alone, a <see cref="BackgroundJobServer"/> whose
/// fixed pool of dedicated worker threads runs them.
/// </summary>
/// <remarks>
/// <para>
/// Settings (stated in benchmarks/README.md): the serializer settings Hangfire's getting-started docs recommend
/// (<c>SetDataCompatibilityLevel(Version_180)</c>, <c>UseSimpleAssemblyNameTypeSerializer</c>,
/// <c>UseRecommendedSerializerSettings</c>); <see cref="BackgroundJobServerOptions.WorkerCount"/> as given, every other
/// server option at its default (the default queue; <c>SchedulePollingInterval</c> 15 s, which only concerns delayed
/// and recurring jobs: none here). The in-memory storage has no queue polling interval to tune: a worker waiting for a
/// job blocks on an event that an enqueue signals (with a 1 s fallback wake-up).
/// </para>
/// <para>
/// <see cref="InMemoryStorageOptions.MaxExpirationTime"/> is <see cref="TimeSpan.Zero"/>: a finished job is removed
/// at once instead of after the default 3 hours, which is what the storage's README offers to bound its memory. The
/// benchmarks run hundreds of thousands of jobs; keeping them all would cost gigabytes and garbage-collection time
/// that a user running this volume would not accept. It is the cheaper setting for Hangfire.
/// </para>
/// </remarks>
public sealed class HangfireHost : IDisposable
{
    private static readonly Lazy<bool> Configured = new(() =>
    {
        // Process-wide serializer settings, as in Hangfire's docs; the storage itself is passed explicitly below.
        GlobalConfiguration.Configuration
            .SetDataCompatibilityLevel(CompatibilityLevel.Version_180)
            .UseSimpleAssemblyNameTypeSerializer()
            .UseRecommendedSerializerSettings();
        return true;
    });

    private readonly InMemoryStorage _storage;
    private readonly BackgroundJobClient _client;
    private readonly HangfireJobActivator _activator;
    private BackgroundJobServer? _server;

    private HangfireHost(Action<int> job)
    {
        _ = Configured.Value;
        _storage = new InMemoryStorage(new InMemoryStorageOptions { MaxExpirationTime = TimeSpan.Zero });
        _client = new BackgroundJobClient(_storage);
        _activator = new HangfireJobActivator(new HangfireJob(job));
    }

    /// <summary>Gets the number of workers of the running server (0 when none runs).</summary>
    public int Workers { get; private set; }

    /// <summary>Creates the storage, the client and a server with <paramref name="workers"/> workers.</summary>
    /// <param name="workers">The server's <see cref="BackgroundJobServerOptions.WorkerCount"/>.</param>
    /// <param name="job">What each job does with its order id.</param>
    /// <returns>The started host.</returns>
    public static HangfireHost Start(int workers, Action<int> job) => Start(workers, job, DelayedJobScheduler.DefaultPollingDelay);

    /// <summary>
    /// Creates the storage, the client and a server with <paramref name="workers"/> workers whose delayed-job scheduler
    /// polls every <paramref name="schedulePollingInterval"/>.
    /// </summary>
    /// <param name="workers">The server's <see cref="BackgroundJobServerOptions.WorkerCount"/>.</param>
    /// <param name="job">What each job does with its order id.</param>
    /// <param name="schedulePollingInterval">
    /// The server's <see cref="BackgroundJobServerOptions.SchedulePollingInterval"/> (15 s by default; zero, the smallest
    /// Hangfire accepts, makes the scheduler poll back to back).
    /// </param>
    /// <returns>The started host.</returns>
    public static HangfireHost Start(int workers, Action<int> job, TimeSpan schedulePollingInterval)
    {
        var host = new HangfireHost(job);
        host.StartServer(workers, schedulePollingInterval);
        return host;
    }

    /// <summary>Creates the storage and the client only: jobs are stored and wait until <see cref="StartServer"/>.</summary>
    /// <param name="job">What each job does with its order id.</param>
    /// <returns>The host, with no server running.</returns>
    public static HangfireHost StartClientOnly(Action<int> job) => new(job);

    /// <summary>Enqueues one fire-and-forget job, as <c>BackgroundJob.Enqueue</c> does.</summary>
    /// <param name="orderId">The job's argument.</param>
    /// <returns>The job id Hangfire assigned.</returns>
    public string Enqueue(int orderId) => _client.Enqueue<HangfireJob>(j => j.Run(orderId));

    /// <summary>
    /// Schedules one delayed job, as <c>BackgroundJob.Schedule</c> does: stored in the <c>Scheduled</c> state, it is
    /// enqueued by the server's delayed-job scheduler at its first poll once the job's due second has begun (Hangfire
    /// keeps due times in whole seconds), then run by a worker.
    /// </summary>
    /// <param name="orderId">The job's argument.</param>
    /// <param name="delay">How long from now the job is due.</param>
    /// <returns>The job id Hangfire assigned.</returns>
    public string Schedule(int orderId, TimeSpan delay) => _client.Schedule<HangfireJob>(j => j.Run(orderId), delay);

    /// <summary>Starts a server with <paramref name="workers"/> workers.</summary>
    /// <param name="workers">The server's <see cref="BackgroundJobServerOptions.WorkerCount"/>.</param>
    /// <exception cref="InvalidOperationException">A server is already running.</exception>
    public void StartServer(int workers) => StartServer(workers, DelayedJobScheduler.DefaultPollingDelay);

    /// <summary>Starts a server with <paramref name="workers"/> workers and the given schedule polling interval.</summary>
    /// <param name="workers">The server's <see cref="BackgroundJobServerOptions.WorkerCount"/>.</param>
    /// <param name="schedulePollingInterval">The server's <see cref="BackgroundJobServerOptions.SchedulePollingInterval"/>.</param>
    /// <exception cref="InvalidOperationException">A server is already running.</exception>
    public void StartServer(int workers, TimeSpan schedulePollingInterval)
    {
        if (_server is not null)
        {
            throw new InvalidOperationException("The Hangfire server is already running.");
        }

        _server = new BackgroundJobServer(
            new BackgroundJobServerOptions { WorkerCount = workers, Activator = _activator, SchedulePollingInterval = schedulePollingInterval },
            _storage);
        Workers = workers;
    }

    /// <summary>Stops the server (its workers finish their current job) and waits for it.</summary>
    public void StopServer()
    {
        _server?.Dispose();
        _server = null;
        Workers = 0;
    }

    /// <summary>Gets the worker count the running servers have registered in the storage (what the dashboard shows).</summary>
    /// <returns>The registered workers.</returns>
    public int RegisteredWorkers() => _storage.GetMonitoringApi().Servers().Sum(s => s.WorkersCount);

    /// <summary>Stops the server and disposes the storage.</summary>
    public void Dispose()
    {
        StopServer();
        _storage.Dispose();
    }
}
