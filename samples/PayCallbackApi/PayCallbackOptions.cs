using System.ComponentModel.DataAnnotations;

namespace PayCallbackApi;

/// <summary>How the callback service runs: the "before" picture or the fix.</summary>
public enum ProcessingMode
{
    /// <summary>The fix: pre-warmed Redis, async request path, post-payment work on WorkQueue's dedicated workers.</summary>
    Queue,

    /// <summary>The incident: sync Redis calls, no pre-warm, post-payment work fired with Task.Run per request.</summary>
    Naive,

    /// <summary>
    /// The fix, crash-safe: as <see cref="Queue"/>, but the queues are durable (Redis Streams; the same queues, see
    /// <see cref="SampleQueues"/>): a callback is answered 200 only once its job is in Redis, and jobs survive a kill
    /// of the process.
    /// </summary>
    Durable,

    /// <summary>
    /// A measuring baseline, not a way to run the service: <see cref="Queue"/> mode's request path (signature, parsing,
    /// the async claim script) with no post-payment work at all, so that what the background pipeline costs per
    /// callback is its own figure (Queue or Durable minus Bare). Accepted payments are claimed and never settled.
    /// </summary>
    Bare,
}

/// <summary>Settings under <c>PayCallback</c>.</summary>
public sealed class PayCallbackOptions
{
    public const string Section = "PayCallback";

    /// <summary>Gets or sets the HMAC-SHA256 key the gateway signs callback bodies with.</summary>
    [Required(ErrorMessage = "PayCallback:SigningKey is required (environment: PayCallback__SigningKey).")]
    [MinLength(8, ErrorMessage = "PayCallback:SigningKey must be at least 8 characters.")]
    public string SigningKey { get; set; } = "";

    /// <summary>Gets or sets the processing mode.</summary>
    public ProcessingMode Mode { get; set; } = ProcessingMode.Queue;

    /// <summary>Gets or sets how long each call to the legacy SMS and delivery providers blocks, in milliseconds.</summary>
    [Range(0, 60_000)]
    public int ProviderLatencyMs { get; set; } = 20;

    /// <summary>Gets or sets when the nightly settlement summary runs (a cron expression, read in <see cref="SettlementTimeZone"/>).</summary>
    public string SettlementSummaryCron { get; set; } = "0 2 * * *";

    /// <summary>Gets or sets the time zone of <see cref="SettlementSummaryCron"/>.</summary>
    public string SettlementTimeZone { get; set; } = "UTC";

    /// <summary>
    /// Gets or sets the share of callbacks whose trace (the request and its jobs' spans) is recorded when the caller sent
    /// no trace context: 0.1 keeps one in ten, as a service taking thousands of callbacks a second would configure
    /// (every trace costs CPU per request and per job). A caller's sampled <c>traceparent</c> is always followed.
    /// </summary>
    [Range(0.0, 1.0)]
    public double TraceSampleRatio { get; set; } = 0.1;

    /// <summary>Gets or sets how often (ms) to log CLR thread-pool statistics from a dedicated thread; 0 turns it off.</summary>
    [Range(0, 60_000)]
    public int DiagnosticsIntervalMs { get; set; }
}
