using System.Diagnostics.CodeAnalysis;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using WorkQueue;
using WorkQueue.AspNetCore;
using WorkQueue.AspNetCore.Admin;
using WorkQueue.AspNetCore.Dashboard;

namespace Microsoft.AspNetCore.Builder;

public static partial class WorkQueueEndpointRouteBuilderExtensions
{
    /// <summary>
    /// Maps the dashboard page at <paramref name="pattern"/>: one self-contained page (HTML, script and style sheet
    /// embedded in this assembly) that shows every queue live and calls the admin endpoints for its data and controls.
    /// </summary>
    /// <remarks>
    /// <para>
    /// The page shell holds no data, so it is served like a static file, to anyone who can reach it, except what a
    /// browser sends for a page of another origin (<c>Sec-Fetch-Site</c> other than <c>same-origin</c> or <c>none</c>:
    /// 403); the page itself also answers a top-level navigation from another site (a link, a redirect back from
    /// sign-in). Every call it makes goes to the admin endpoints (<see cref="WorkQueueDashboardOptions.AdminPrefix"/>),
    /// which keep their own protection: loopback-only by default, or the authorization policy chained on
    /// <c>MapWorkQueueAdmin</c>. Map those too, and call <c>services.AddWorkQueueDashboard()</c> so the page shows the last
    /// minutes at once.
    /// </para>
    /// <para>
    /// The page is served with a strict <c>Content-Security-Policy</c> (its own script and style sheet only, no
    /// framing), <c>X-Content-Type-Options: nosniff</c> and <c>Referrer-Policy: no-referrer</c>.
    /// </para>
    /// </remarks>
    /// <param name="endpoints">The endpoint route builder.</param>
    /// <param name="pattern">The page's path; its script and style sheet are served under it.</param>
    /// <param name="configure">Configures where the admin endpoints are and how the page authenticates to them.</param>
    /// <returns>A builder for conventions on the page's endpoints.</returns>
    /// <exception cref="InvalidOperationException"><c>AddWorkQueue</c> or <c>AddWorkQueueDashboard</c> was not called.</exception>
    /// <exception cref="ArgumentException">An option is not valid.</exception>
    public static IEndpointConventionBuilder MapWorkQueueDashboard(
        this IEndpointRouteBuilder endpoints,
        [StringSyntax("Route")] string pattern = "/admin/workqueue/ui",
        Action<WorkQueueDashboardOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        ArgumentException.ThrowIfNullOrWhiteSpace(pattern);
        if (endpoints.ServiceProvider.GetService<IWorkQueueProvider>() is null)
        {
            throw new InvalidOperationException(
                "Unable to find the WorkQueue services. Add them by calling 'services.AddWorkQueue()' before mapping the dashboard.");
        }

        if (endpoints.ServiceProvider.GetService<DashboardHistory>() is null)
        {
            throw new InvalidOperationException(
                "Unable to find the WorkQueue dashboard services. Add them by calling 'services.AddWorkQueueDashboard()' before mapping the dashboard.");
        }

        var options = new WorkQueueDashboardOptions();
        configure?.Invoke(options);
        Validate(options);

        var logger = endpoints.ServiceProvider.GetRequiredService<ILoggerFactory>().CreateLogger("WorkQueue.AspNetCore.Admin");

        // Its refusals are problems, written with the app's JSON options.
        AddAdminJson(endpoints.ServiceProvider, logger);
        var page = new DashboardEndpoints(pattern, options);
        var group = endpoints.MapGroup(pattern).WithTags("WorkQueue").ExcludeFromDescription();
        AdminRequestGate.Add(group.MapGet("/", page.Index), CrossSiteCheck.FindPageRefusal);
        AdminRequestGate.Add(group.MapGet("/dashboard.js", DashboardEndpoints.Script), CrossSiteCheck.FindRefusal);
        AdminRequestGate.Add(group.MapGet("/dashboard.css", DashboardEndpoints.StyleSheet), CrossSiteCheck.FindRefusal);

        Log.DashboardMapped(logger, pattern, options.AdminPrefix);
        return group;
    }

    private static void Validate(WorkQueueDashboardOptions options)
    {
        if (string.IsNullOrWhiteSpace(options.AdminPrefix) || !options.AdminPrefix.StartsWith('/'))
        {
            throw new ArgumentException(
                $"WorkQueueDashboardOptions.AdminPrefix must be the path the admin endpoints are mapped at, starting with '/'; it was '{options.AdminPrefix}'.",
                nameof(options));
        }

        if (options.ApiKeyHeader is { } header && (header.Length == 0 || !header.All(IsHeaderNameChar)))
        {
            throw new ArgumentException(
                $"WorkQueueDashboardOptions.ApiKeyHeader must be an HTTP header name (letters, digits, '-' or '_'); it was '{header}'.",
                nameof(options));
        }
    }

    private static bool IsHeaderNameChar(char c) => char.IsAsciiLetterOrDigit(c) || c is '-' or '_';
}
