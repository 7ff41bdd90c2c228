using System.Diagnostics;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Redis;

/// <summary>
/// Connects to Redis, pings every endpoint, runs the server checks (<see cref="IRedisWarmupCheck"/>) and then the
/// warm-up callbacks in <see cref="StartingAsync"/>, which the host
/// runs before any hosted service's <c>StartAsync</c>, so before Kestrel accepts a request: the first request finds a
/// connected multiplexer instead of paying for (and blocking threads on) the cold connection.
/// </summary>
internal sealed partial class RedisWarmupService : IHostedLifecycleService, IDisposable
{
    private readonly RedisConnection _connection;
    private readonly RedisWarmupOptions _options;
    private readonly ILogger<RedisWarmupService> _logger;
    private readonly IRedisWarmupCheck[] _checks;
    private readonly CancellationTokenSource _stopping = new();
    private Task? _retryLoop;

    public RedisWarmupService(RedisConnection connection, IOptions<RedisWarmupOptions> options, ILogger<RedisWarmupService> logger, IEnumerable<IRedisWarmupCheck> checks)
    {
        _connection = connection;
        _options = options.Value;
        _logger = logger;
        _checks = [.. checks];
    }

    public async Task StartingAsync(CancellationToken cancellationToken)
    {
        if (_options.FailureMode == RedisWarmupFailureMode.FailFast)
        {
            try
            {
                await WarmUpAsync(abortOnConnectFail: true, cancellationToken).ConfigureAwait(false);
            }
            catch (DedicatedIoThreadsUnavailableException ex)
            {
                Log.WarmupFailedFatal(_logger, ex, _connection.Endpoints);
                throw;
            }
            catch (Exception ex) when (ex is not OperationCanceledException || !cancellationToken.IsCancellationRequested)
            {
                Log.WarmupFailedFatal(_logger, ex, _connection.Endpoints);
                throw new InvalidOperationException(
                    $"Redis warm-up failed for {_connection.Endpoints}: {ex.Message} " +
                    $"(RedisWarmupOptions.FailureMode is FailFast; use StartNotReady to start anyway and keep retrying).",
                    ex);
            }

            return;
        }

        // StartNotReady: one attempt now, so a reachable Redis is still warm before traffic; then retry in the background.
        // Dedicated I/O threads that could not be had are a configuration error, not an outage: startup fails in both modes.
        try
        {
            if (await TryWarmUpAsync(cancellationToken).ConfigureAwait(false))
            {
                return;
            }
        }
        catch (DedicatedIoThreadsUnavailableException ex)
        {
            Log.WarmupFailedFatal(_logger, ex, _connection.Endpoints);
            throw;
        }

        _retryLoop = RetryUntilWarmAsync(_stopping.Token);
    }

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public async Task StoppingAsync(CancellationToken cancellationToken)
    {
        await _stopping.CancelAsync().ConfigureAwait(false);
        if (_retryLoop is not null)
        {
            await _retryLoop.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public void Dispose() => _stopping.Dispose();

    private async Task RetryUntilWarmAsync(CancellationToken cancellationToken)
    {
        while (!cancellationToken.IsCancellationRequested)
        {
            try
            {
                await Task.Delay(_options.RetryInterval, cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }

            try
            {
                if (await TryWarmUpAsync(cancellationToken).ConfigureAwait(false))
                {
                    return;
                }
            }
            catch (DedicatedIoThreadsUnavailableException ex)
            {
                // Retrying would find the same connections: stay not ready, with the reason in readiness and the log.
                _connection.MarkFailed(ex.Message);
                Log.WarmupFailedStaysNotReady(_logger, ex, _connection.Endpoints);
                return;
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                // The host is stopping during an attempt (Redis not answering): the stop must not fail over it.
                return;
            }
        }
    }

    private async Task<bool> TryWarmUpAsync(CancellationToken cancellationToken)
    {
        try
        {
            await WarmUpAsync(abortOnConnectFail: false, cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (Exception ex) when (ex is not DedicatedIoThreadsUnavailableException && !cancellationToken.IsCancellationRequested)
        {
            _connection.MarkFailed($"{ex.GetType().Name}: {ex.Message}");
            Log.WarmupFailedWillRetry(_logger, ex, _connection.Endpoints, _options.RetryInterval.TotalSeconds);
            return false;
        }
    }

    private async Task WarmUpAsync(bool abortOnConnectFail, CancellationToken cancellationToken)
    {
        var stopwatch = Stopwatch.StartNew();
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(_options.Timeout);
        try
        {
            // The connect is bounded by StackExchange.Redis's own ConnectTimeout (set to Timeout), so that a failure
            // carries its real cause (refused, auth, DNS...) rather than our timeout's.
            var multiplexer = await _connection.ConnectAsync(abortOnConnectFail).WaitAsync(cancellationToken).ConfigureAwait(false);
            var endpoints = EndpointsToWarm(multiplexer);
            foreach (var endpoint in endpoints)
            {
                try
                {
                    await multiplexer.GetServer(endpoint).PingAsync().WaitAsync(timeout.Token).ConfigureAwait(false);
                }
                catch (Exception ex) when (ex is not OperationCanceledException)
                {
                    throw new InvalidOperationException($"PING to {RedisConnection.Format(endpoint)} failed: {ex.Message}", ex);
                }
            }

            // Every endpoint's connection exists now (it answered PING), so what it got can be asked.
            var ioThreads = CheckIoThreads(multiplexer, endpoints);

            // The server checks before the callbacks: a callback sends commands too (the durable queues' group step,
            // DurableGroupsWarmup), and one that Redis refuses would fail the warm-up with a bare NOPERM, where the
            // access check names the commands refused and the ACL to add. The checks only read (INFO, ACL checks).
            foreach (var check in _checks)
            {
                await check.RunAsync(multiplexer, timeout.Token).WaitAsync(timeout.Token).ConfigureAwait(false);
            }

            foreach (var callback in _options.WarmupCallbacks)
            {
                await callback(multiplexer, timeout.Token).WaitAsync(timeout.Token).ConfigureAwait(false);
            }

            _connection.MarkWarm(ioThreads);
            Log.WarmupCompleted(_logger, stopwatch.Elapsed.TotalMilliseconds, _connection.Endpoints, endpoints.Length, _options.WarmupCallbacks.Count);
        }
        catch (OperationCanceledException) when (timeout.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
            throw new TimeoutException($"the warm-up did not finish within RedisWarmupOptions.Timeout ({_options.Timeout})");
        }
    }

    /// <summary>
    /// Gets the endpoints the warm-up pings: every one, except through Sentinel (<c>serviceName=</c>), where only those
    /// connected count, one of them a primary. The Sentinels list every server they know, and after a failover the dead
    /// old primary stays listed (as a replica of the new one, down) until it is back: a process that starts then would
    /// otherwise wait for it, not ready, however healthy the new primary.
    /// </summary>
    private System.Net.EndPoint[] EndpointsToWarm(ConnectionMultiplexer multiplexer)
    {
        var all = multiplexer.GetEndPoints();
        if (string.IsNullOrEmpty(_connection.DescribeConfiguration().ServiceName))
        {
            return all;
        }

        var up = all.Where(e => multiplexer.GetServer(e).IsConnected).ToArray();
        return up.Any(e => !multiplexer.GetServer(e).IsReplica)
            ? up
            : throw new InvalidOperationException(
                $"no primary among the servers the Sentinels named ({string.Join(", ", all.Select(RedisConnection.Format))}; connected: {(up.Length == 0 ? "none" : string.Join(", ", up.Select(RedisConnection.Format)))})");
    }

    /// <summary>
    /// Finds which threads serve the connections the warm-up made, logs it, and fails when dedicated threads were asked
    /// for and not had.
    /// </summary>
    private RedisIoThreads CheckIoThreads(IConnectionMultiplexer multiplexer, System.Net.EndPoint[] endpoints)
    {
        var found = DedicatedIoThreads.Inspect(multiplexer, endpoints);
        if (!_options.DedicatedIoThreads)
        {
            // Left alone, so not ours to enforce; but say what the process-wide flag gave, which may be dedicated anyway.
            Log.IoThreadsPoolChosen(_logger, _connection.Endpoints, Describe(found));
            return found;
        }

        switch (found)
        {
            case RedisIoThreads.Dedicated:
                Log.IoThreadsDedicated(_logger, _connection.Endpoints, endpoints.Length);
                return found;
            case RedisIoThreads.Unverified when DedicatedIoThreads.IsEnabled:
                Log.IoThreadsUnverified(_logger, _connection.Endpoints, DedicatedIoThreads.LibraryVersion);
                return found;
            default:
                throw new DedicatedIoThreadsUnavailableException(
                    $"RedisWarmupOptions.DedicatedIoThreads is true, but the connection to {_connection.Endpoints} was made with " +
                    $"{Describe(found)}, so Redis replies would stop arriving when the thread pool is starved. StackExchange.Redis's " +
                    $"'{DedicatedIoThreads.FeatureFlag}' feature flag is process-wide and read when a connection is made: something in " +
                    $"this process switched it off (ConnectionMultiplexer.SetFeatureFlag(\"{DedicatedIoThreads.FeatureFlag}\", false), " +
                    $"flag now {(DedicatedIoThreads.IsEnabled ? "on" : "off")}) or a RedisWarmupOptions.ConfigureRedis setting (such as a " +
                    "Tunnel) bypasses it. Remove that, or set RedisWarmupOptions.DedicatedIoThreads to false to use the thread pool knowingly.");
        }
    }

    private static string Describe(RedisIoThreads ioThreads) => ioThreads switch
    {
        RedisIoThreads.Dedicated => "dedicated reader and writer threads",
        RedisIoThreads.ThreadPool => "its reads and writes on the CLR thread pool",
        RedisIoThreads.Mixed => "dedicated threads on some endpoints and the CLR thread pool on others",
        _ => "I/O threads that StackExchange.Redis cannot report",
    };

    private static partial class Log
    {
        [LoggerMessage(300, LogLevel.Information, "Redis warm-up completed in {ElapsedMs:F0} ms: connected to {Endpoints}, {Pinged} endpoint(s) answered PING, {Callbacks} warm-up callback(s) ran.", EventName = "RedisWarmupCompleted")]
        public static partial void WarmupCompleted(ILogger logger, double elapsedMs, string endpoints, int pinged, int callbacks);

        [LoggerMessage(301, LogLevel.Critical, "Redis warm-up failed for {Endpoints}; the app will not start.", EventName = "RedisWarmupFailed")]
        public static partial void WarmupFailedFatal(ILogger logger, Exception exception, string endpoints);

        [LoggerMessage(302, LogLevel.Warning, "Redis warm-up failed for {Endpoints}; the app is not ready and retries in {RetrySeconds:F1} s.", EventName = "RedisWarmupRetrying")]
        public static partial void WarmupFailedWillRetry(ILogger logger, Exception exception, string endpoints, double retrySeconds);

        [LoggerMessage(303, LogLevel.Information, "Redis I/O threads for {Endpoints}: dedicated (a reader and a writer thread per connection, {Connections} connection(s), off the CLR thread pool; the flag is process-wide).", EventName = "RedisIoThreadsDedicated")]
        public static partial void IoThreadsDedicated(ILogger logger, string endpoints, int connections);

        [LoggerMessage(304, LogLevel.Information, "Redis I/O threads for {Endpoints}: RedisWarmupOptions.DedicatedIoThreads is false, so the flag was left as it is; the connection was made with {Found}. Without dedicated threads, Redis calls time out when the thread pool is starved.", EventName = "RedisIoThreadsPoolChosen")]
        public static partial void IoThreadsPoolChosen(ILogger logger, string endpoints, string found);

        [LoggerMessage(305, LogLevel.Warning, "Redis I/O threads for {Endpoints}: dedicated threads were requested and the flag is on, but StackExchange.Redis {Version} cannot report what each connection got, so it is unverified.", EventName = "RedisIoThreadsUnverified")]
        public static partial void IoThreadsUnverified(ILogger logger, string endpoints, string version);

        [LoggerMessage(306, LogLevel.Critical, "Redis warm-up failed for {Endpoints} in a way retrying cannot fix; the app stays not ready.", EventName = "RedisWarmupFailedNotRetried")]
        public static partial void WarmupFailedStaysNotReady(ILogger logger, Exception exception, string endpoints);
    }
}
