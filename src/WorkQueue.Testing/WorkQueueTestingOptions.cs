using Microsoft.Extensions.Time.Testing;

namespace WorkQueue.Testing;

/// <summary>
/// Options of <c>AddWorkQueueTesting</c>: what queues do with enqueued jobs, the engine's clock, and the default wait.
/// </summary>
public sealed class WorkQueueTestingOptions
{
    private readonly Dictionary<string, WorkQueueTestMode> _queueModes = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>Gets or sets what every queue without a mode of its own does with enqueued jobs.</summary>
    /// <value>The default value is <see cref="WorkQueueTestMode.Run"/>: jobs run as in production, and are recorded.</value>
    public WorkQueueTestMode Mode { get; set; } = WorkQueueTestMode.Run;

    /// <summary>
    /// Gets or sets the clock the engine runs on: scheduled jobs, retry delays, job timeouts and recurring jobs follow it,
    /// and <see cref="IWorkQueueTestHarness.AdvanceTimeAsync(TimeSpan, TimeSpan?, CancellationToken)"/> moves it. Retry
    /// jitter is fixed at the middle of its range with a fake clock, so a retry's delay is known.
    /// </summary>
    /// <remarks>
    /// This is the engine's clock only; an application that reads <see cref="TimeProvider"/> from the container gets the
    /// same one if the test registers it there too. A durable queue's store polls on this clock as well, and its due times
    /// are on Redis's clock, which no fake moves: use a fake clock with in-memory queues.
    /// </remarks>
    /// <value>The default value is <see langword="null"/>: the engine keeps its real clock.</value>
    public FakeTimeProvider? FakeTime { get; set; }

    /// <summary>Gets or sets how long the harness's waits last when the call gives no timeout.</summary>
    /// <value>The default value is 30 seconds.</value>
    public TimeSpan IdleTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>Sets what one queue does with enqueued jobs, overriding <see cref="Mode"/> for it.</summary>
    /// <param name="queueName">The queue's name (case-insensitive).</param>
    /// <param name="mode">The mode.</param>
    /// <returns>These options.</returns>
    /// <exception cref="ArgumentException"><paramref name="queueName"/> is null, empty or white space.</exception>
    public WorkQueueTestingOptions SetMode(string queueName, WorkQueueTestMode mode)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(queueName);
        _queueModes[queueName] = mode;
        return this;
    }

    internal IReadOnlyDictionary<string, WorkQueueTestMode> QueueModes => _queueModes;
}
