using System.ComponentModel.DataAnnotations;
using StackExchange.Redis;

namespace WorkQueue.AspNetCore;

/// <summary>
/// Configures the shared <see cref="IConnectionMultiplexer"/> and how it is warmed up before the server takes traffic.
/// </summary>
public sealed class RedisWarmupOptions
{
    /// <summary>
    /// Gets or sets the StackExchange.Redis configuration string (for example <c>127.0.0.1:6379,password=...</c>).
    /// </summary>
    /// <value>The default value is <c>127.0.0.1:6379</c>.</value>
    [Required]
    public string Configuration { get; set; } = "127.0.0.1:6379";

    /// <summary>
    /// Gets or sets how long connecting, pinging every endpoint and running the warm-up callbacks may take in all.
    /// </summary>
    /// <value>The default value is 10 seconds.</value>
    [Range(typeof(TimeSpan), "00:00:00.100", "00:10:00")]
    public TimeSpan Timeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Gets or sets what happens when the warm-up fails.
    /// </summary>
    /// <value>The default value is <see cref="RedisWarmupFailureMode.FailFast"/>.</value>
    public RedisWarmupFailureMode FailureMode { get; set; } = RedisWarmupFailureMode.FailFast;

    /// <summary>
    /// Gets or sets how long to wait between two warm-up attempts in <see cref="RedisWarmupFailureMode.StartNotReady"/> mode.
    /// </summary>
    /// <value>The default value is 2 seconds.</value>
    [Range(typeof(TimeSpan), "00:00:00.010", "01:00:00")]
    public TimeSpan RetryInterval { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>
    /// Gets or sets StackExchange.Redis's <see cref="ConfigurationOptions.HighPrioritySocketThreads"/> (the installed
    /// 1.2.6's only thread knob: the priority of its socket threads).
    /// </summary>
    /// <remarks>
    /// It does not make replies independent of the CLR thread pool: on .NET, 1.2.6 still reads replies through the pool,
    /// so when the pool is starved synchronous calls time out with unread bytes waiting (<c>RedisTimeoutException ...
    /// in: 31, ar: 0</c> was seen in the sample's Naive mode). Keep Redis calls on request paths asynchronous and
    /// blocking work off the pool, which is what WorkQueue is for.
    /// </remarks>
    /// <value>The default value is <see langword="true"/>.</value>
    public bool HighPrioritySocketThreads { get; set; } = true;

    /// <summary>
    /// Gets or sets the timeout of synchronous Redis calls (<see cref="ConfigurationOptions.SyncTimeout"/>), or
    /// <see langword="null"/> for the library's default. Synchronous calls block their thread; prefer the async API on
    /// request paths.
    /// </summary>
    /// <value>The default value is <see langword="null"/>.</value>
    public TimeSpan? SyncTimeout { get; set; }

    /// <summary>
    /// Gets or sets a callback that adjusts the parsed <see cref="ConfigurationOptions"/> before connecting (any other
    /// StackExchange.Redis setting, such as <see cref="ConfigurationOptions.SocketManager"/>).
    /// </summary>
    /// <value>The default value is <see langword="null"/>.</value>
    public Action<ConfigurationOptions>? ConfigureRedis { get; set; }

    /// <summary>
    /// Gets the callbacks run after every endpoint answered <c>PING</c> (for example, to load Lua scripts); the warm-up
    /// is complete only when all of them succeed.
    /// </summary>
    public IList<Func<IConnectionMultiplexer, CancellationToken, Task>> WarmupCallbacks { get; } = [];
}
