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

    public RedisConnection(IOptions<RedisWarmupOptions> options)
    {
        _options = options.Value;
    }

    public bool IsWarm => _isWarm;

    public string? LastError => _lastError;

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
                return _multiplexer ??= ConnectionMultiplexer.Connect(BuildConfiguration(abortOnConnectFail: false));
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

        var connected = await ConnectionMultiplexer.ConnectAsync(BuildConfiguration(abortOnConnectFail)).ConfigureAwait(false);
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

    public void MarkWarm()
    {
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

    private ConfigurationOptions BuildConfiguration(bool abortOnConnectFail)
    {
        var configuration = ConfigurationOptions.Parse(_options.Configuration);
        configuration.AbortOnConnectFail = abortOnConnectFail;
        configuration.ConnectTimeout = (int)_options.Timeout.TotalMilliseconds;
        configuration.HighPrioritySocketThreads = _options.HighPrioritySocketThreads;
        if (_options.SyncTimeout is { } syncTimeout)
        {
            configuration.SyncTimeout = (int)syncTimeout.TotalMilliseconds;
        }

        _options.ConfigureRedis?.Invoke(configuration);
        return configuration;
    }
}
