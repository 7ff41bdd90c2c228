using System.Net;
using Microsoft.Extensions.Options;
using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Redis;

/// <summary>Owns the one shared multiplexer and the warm-up state that readiness reports.</summary>
internal sealed class RedisConnection : IAsyncDisposable
{
    private readonly RedisWarmupOptions _options;
    private readonly Lock _lock = new();
    private ConnectionMultiplexer? _multiplexer;
    private volatile bool _isWarm;
    private volatile string? _lastError;
    private volatile RedisIoThreads _ioThreads;

    public RedisConnection(IOptions<RedisWarmupOptions> options)
    {
        _options = options.Value;
    }

    public bool IsWarm => _isWarm;

    public string? LastError => _lastError;

    /// <summary>Gets which threads serve the connections, as the warm-up found them.</summary>
    public RedisIoThreads IoThreads => _ioThreads;

    public string Endpoints => string.Join(", ", BuildConfiguration(abortOnConnectFail: false).EndPoints.Select(Format));

    /// <summary>
    /// Gets the multiplexer. Normally the warm-up has connected it before anyone asks; if something asks earlier, it is
    /// created now, connecting in the background (StackExchange.Redis reconnects by itself).
    /// </summary>
    public IConnectionMultiplexer Multiplexer
    {
        get
        {
            lock (_lock)
            {
                return _multiplexer ??= ConnectionMultiplexer.Connect(PrepareConnect(abortOnConnectFail: false));
            }
        }
    }

    public async Task<ConnectionMultiplexer> ConnectAsync(bool abortOnConnectFail)
    {
        lock (_lock)
        {
            if (_multiplexer is not null)
            {
                return _multiplexer;
            }
        }

        var connected = await ConnectionMultiplexer.ConnectAsync(PrepareConnect(abortOnConnectFail)).ConfigureAwait(false);
        lock (_lock)
        {
            if (_multiplexer is null)
            {
                _multiplexer = connected;
                return connected;
            }
        }

        connected.Dispose();
        return _multiplexer;
    }

    public void MarkWarm(RedisIoThreads ioThreads)
    {
        _ioThreads = ioThreads;
        _lastError = null;
        _isWarm = true;
    }

    public void MarkFailed(string error) => _lastError = error;

    public async ValueTask DisposeAsync()
    {
        ConnectionMultiplexer? multiplexer;
        lock (_lock)
        {
            multiplexer = _multiplexer;
            _multiplexer = null;
        }

        if (multiplexer is not null)
        {
            await multiplexer.CloseAsync(allowCommandsToComplete: true).ConfigureAwait(false);
            multiplexer.Dispose();
        }
    }

    internal static string Format(EndPoint endpoint) => endpoint switch
    {
        DnsEndPoint dns => $"{dns.Host}:{dns.Port}",
        _ => endpoint.ToString() ?? "?",
    };

    /// <summary>
    /// Turns dedicated I/O threads on when the options ask for them (the flag is read by each connection as it is made,
    /// so it must be on before the multiplexer connects), then builds the configuration.
    /// </summary>
    /// <summary>Gets the settings the connection is (or will be) made with, without connecting (timeouts, for validation).</summary>
    public ConfigurationOptions DescribeConfiguration() => BuildConfiguration(abortOnConnectFail: false);

    private ConfigurationOptions PrepareConnect(bool abortOnConnectFail)
    {
        if (_options.DedicatedIoThreads && !DedicatedIoThreads.Enable())
        {
            throw new DedicatedIoThreadsUnavailableException(
                $"RedisWarmupOptions.DedicatedIoThreads is true, but StackExchange.Redis {DedicatedIoThreads.LibraryVersion} did not " +
                $"accept its '{DedicatedIoThreads.FeatureFlag}' feature flag (it needs 3.1.31 or later). Install a version that has it, " +
                "or set RedisWarmupOptions.DedicatedIoThreads to false to read Redis replies through the CLR thread pool.");
        }

        return BuildConfiguration(abortOnConnectFail);
    }

    private ConfigurationOptions BuildConfiguration(bool abortOnConnectFail)
    {
        var configuration = ConfigurationOptions.Parse(_options.Configuration);
        configuration.AbortOnConnectFail = abortOnConnectFail;
        configuration.ConnectTimeout = (int)_options.Timeout.TotalMilliseconds;

        // StackExchange.Redis's default backs off from half the connect timeout (5 s here) before its first reconnect
        // attempt: a durable queue would refuse enqueues for that long after Redis is back (4.3-4.7 s measured by the
        // chaos runs, 0.4 s with 250 ms). ConfigureRedis can set another policy.
        configuration.ReconnectRetryPolicy = new ExponentialRetry(deltaBackOffMilliseconds: 250, maxDeltaBackOffMilliseconds: 5_000);
        if (_options.SyncTimeout is { } syncTimeout)
        {
            configuration.SyncTimeout = (int)syncTimeout.TotalMilliseconds;
        }

        _options.ConfigureRedis?.Invoke(configuration);
        return configuration;
    }
}
