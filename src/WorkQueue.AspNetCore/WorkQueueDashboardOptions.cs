namespace WorkQueue.AspNetCore;

/// <summary>
/// Configures the dashboard page mapped by <c>MapWorkQueueDashboard</c>.
/// </summary>
public sealed class WorkQueueDashboardOptions
{
    /// <summary>
    /// Gets or sets the prefix the admin endpoints were mapped under (<c>MapWorkQueueAdmin(prefix)</c>). The page makes
    /// every data and control call there, so those endpoints' protection applies to it.
    /// </summary>
    /// <value>The default value is <c>/admin/workqueue</c>.</value>
    public string AdminPrefix { get; set; } = "/admin/workqueue";

    /// <summary>
    /// Gets or sets the request header that carries an API key the admin endpoints' authorization policy checks (for
    /// example <c>X-Admin-Key</c>). When set, the page asks for the key the first time the admin endpoints answer 401,
    /// keeps it in the browser tab's <c>sessionStorage</c> and sends it in this header; when <see langword="null"/>, the
    /// page sends no key and shows the 401.
    /// </summary>
    /// <value>The default value is <see langword="null"/>.</value>
    public string? ApiKeyHeader { get; set; }
}
