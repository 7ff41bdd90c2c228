namespace WorkQueue.AspNetCore;

/// <summary>
/// Configures the admin endpoints mapped by <c>MapWorkQueueAdmin</c> (and so the dashboard, which reads them).
/// </summary>
public sealed class WorkQueueAdminOptions
{
    /// <summary>The largest <see cref="MaxPayloadLength"/>.</summary>
    public const int MaxPayloadLengthLimit = 1_048_576;

    /// <summary>
    /// Gets or sets a value indicating whether the job routes (<c>GET {prefix}/{queue}/jobs</c> and
    /// <c>GET {prefix}/{queue}/jobs/{id}</c>) include a typed job's payload, written as JSON with the app's HTTP JSON
    /// options (<c>ConfigureHttpJsonOptions</c>; in a trimmed or native AOT app, a payload whose type they do not know
    /// shows its <c>ToString()</c>). Payloads may hold personal
    /// data (names, addresses, card or account references): turn this on only where everyone who can reach the admin
    /// endpoints may see them. When off, a job's <c>payload</c> is <see langword="null"/> and <c>payloadsShown</c> is
    /// <see langword="false"/>, and the dashboard says payloads are hidden by configuration.
    /// </summary>
    /// <value>The default value is <see langword="false"/>.</value>
    public bool ShowPayloads { get; set; }

    /// <summary>
    /// Gets or sets the most characters of a payload's JSON the job routes return (the rest is cut and marked with
    /// <c>…</c>), from 1 to <see cref="MaxPayloadLengthLimit"/>.
    /// </summary>
    /// <value>The default value is 4,096.</value>
    public int MaxPayloadLength { get; set; } = 4096;
}
