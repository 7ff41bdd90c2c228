using System.ComponentModel.DataAnnotations;
using StackExchange.Redis;
using WorkQueue.Validation;

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
    [TimeSpanRange("00:00:00.100", "00:10:00")]
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
    [TimeSpanRange("00:00:00.010", "01:00:00")]
    public TimeSpan RetryInterval { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>
    /// Gets or sets whether every Redis connection is read and written by threads of its own instead of the CLR thread
    /// pool, so that Redis replies still arrive when the pool is starved: a synchronous call from a thread that is not a
    /// pool thread (such as a WorkQueue worker) answers instead of timing out, and an async job's awaits resume on its
    /// worker without needing a pool thread.
    /// </summary>
    /// <remarks>
    /// <para>
    /// When <see langword="true"/>, the warm-up turns on StackExchange.Redis's <c>DedicatedThreads</c> feature flag
    /// (<c>ConnectionMultiplexer.SetFeatureFlag("DedicatedThreads", true)</c>) before it connects, then checks on every
    /// endpoint that the connection it made really has its own reader and writer threads; if not (the installed
    /// StackExchange.Redis does not know the flag, or something in the process switched it off before the connection
    /// was made), the warm-up fails with a message that says so. The flag is <b>process-wide</b>: every connection any
    /// multiplexer in the process opens afterwards gets it too. It costs <b>two threads per connection</b> (a reader
    /// and a writer, per Redis node); RESP2 pub/sub connections stay on the pool.
    /// </para>
    /// <para>
    /// It does not fix a starved pool; it keeps Redis traffic out of the jam. Timers, <c>Task.Delay</c>, other
    /// libraries' sockets and <c>ConfigureAwait(false)</c> continuations still need pool threads.
    /// </para>
    /// <para>
    /// When <see langword="false"/>, the flag is left as it is (off unless something else in the process turned it
    /// on): replies are read through the thread pool, and a starved pool makes Redis calls time out.
    /// </para>
    /// </remarks>
    /// <value>The default value is <see langword="true"/>.</value>
    public bool DedicatedIoThreads { get; set; } = true;

    /// <summary>
    /// Gets or sets the timeout of synchronous Redis calls (<see cref="ConfigurationOptions.SyncTimeout"/>), or
    /// <see langword="null"/> for the library's default. Synchronous calls block their thread; prefer the async API on
    /// request paths.
    /// </summary>
    /// <value>The default value is <see langword="null"/>.</value>
    public TimeSpan? SyncTimeout { get; set; }

    /// <summary>
    /// Gets or sets a callback that adjusts the parsed <see cref="ConfigurationOptions"/> before connecting (any other
    /// StackExchange.Redis setting, such as <see cref="ConfigurationOptions.AsyncTimeout"/> or
    /// <see cref="ConfigurationOptions.LoggerFactory"/>). It runs last, so it can also replace what the warm-up sets:
    /// <see cref="ConfigurationOptions.ConnectTimeout"/> (from <see cref="Timeout"/>) and
    /// <see cref="ConfigurationOptions.ReconnectRetryPolicy"/> (an exponential backoff from 250 ms to 5 s, so that a
    /// restarted Redis is used again within a fraction of a second rather than the library's default several seconds).
    /// </summary>
    /// <value>The default value is <see langword="null"/>.</value>
    public Action<ConfigurationOptions>? ConfigureRedis { get; set; }

    /// <summary>
    /// Gets the callbacks run after every endpoint answered <c>PING</c> and the durable queues' startup checks
    /// (<see cref="DurableQueueOptions.ServerChecks"/>) ran (for example, to load Lua scripts); the warm-up is complete
    /// only when all of them succeed.
    /// </summary>
    public IList<Func<IConnectionMultiplexer, CancellationToken, Task>> WarmupCallbacks { get; } = [];
}
