using System.Diagnostics;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace WorkQueue.AspNetCore.Redis;

/// <summary>
/// Connects to Redis, pings every endpoint and runs the warm-up callbacks in <see cref="StartingAsync"/>, which the host
/// runs before any hosted service's <c>StartAsync</c>, so before Kestrel accepts a request: the first request finds a
/// connected multiplexer instead of paying for (and blocking threads on) the cold connection.
/// </summary>
internal sealed partial class RedisWarmupService : IHostedLifecycleService, IDisposable
{
    private readonly RedisConnection _connection;
    private readonly RedisWarmupOptions _options;
    private readonly ILogger<RedisWarmupService> _logger;
    private readonly CancellationTokenSource _stopping = new();
    private Task? _retryLoop;

    public RedisWarmupService(RedisConnection connection, IOptions<RedisWarmupOptions> options, ILogger<RedisWarmupService> logger)
    {
        _connection = connection;
        _options = options.Value;
        _logger = logger;
    }

    public async Task StartingAsync(CancellationToken cancellationToken)
    {
        if (_options.FailureMode == RedisWarmupFailureMode.FailFast)
        {
            try
            {
                await WarmUpAsync(abortOnConnectFail: true, cancellationToken).ConfigureAwait(false);
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
        if (await TryWarmUpAsync(cancellationToken).ConfigureAwait(false))
        {
            return;
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

            if (await TryWarmUpAsync(cancellationToken).ConfigureAwait(false))
            {
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
        catch (Exception ex) when (!cancellationToken.IsCancellationRequested)
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
            var endpoints = multiplexer.GetEndPoints();
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

            foreach (var callback in _options.WarmupCallbacks)
            {
                await callback(multiplexer, timeout.Token).WaitAsync(timeout.Token).ConfigureAwait(false);
            }

            _connection.MarkWarm();
            Log.WarmupCompleted(_logger, stopwatch.Elapsed.TotalMilliseconds, _connection.Endpoints, endpoints.Length, _options.WarmupCallbacks.Count);
        }
        catch (OperationCanceledException) when (timeout.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
            throw new TimeoutException($"the warm-up did not finish within RedisWarmupOptions.Timeout ({_options.Timeout})");
        }
    }

    private static partial class Log
    {
        [LoggerMessage(300, LogLevel.Information, "Redis warm-up completed in {ElapsedMs:F0} ms: connected to {Endpoints}, {Pinged} endpoint(s) answered PING, {Callbacks} warm-up callback(s) ran.", EventName = "RedisWarmupCompleted")]
        public static partial void WarmupCompleted(ILogger logger, double elapsedMs, string endpoints, int pinged, int callbacks);

        [LoggerMessage(301, LogLevel.Critical, "Redis warm-up failed for {Endpoints}; the app will not start.", EventName = "RedisWarmupFailed")]
        public static partial void WarmupFailedFatal(ILogger logger, Exception exception, string endpoints);

        [LoggerMessage(302, LogLevel.Warning, "Redis warm-up failed for {Endpoints}; the app is not ready and retries in {RetrySeconds:F1} s.", EventName = "RedisWarmupRetrying")]
        public static partial void WarmupFailedWillRetry(ILogger logger, Exception exception, string endpoints, double retrySeconds);
    }
}
