using System.Diagnostics.CodeAnalysis;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using WorkQueue;
using WorkQueue.AspNetCore.Admin;

namespace Microsoft.AspNetCore.Builder;

/// <summary>
/// Maps the WorkQueue admin endpoints.
/// </summary>
public static partial class WorkQueueEndpointRouteBuilderExtensions
{
    /// <summary>
    /// Maps the admin endpoints (JSON, camelCase) under <paramref name="prefix"/>:
    /// <c>GET {prefix}</c> (every queue), <c>GET {prefix}/{queue}</c>, <c>GET {prefix}/{queue}/depth</c>,
    /// <c>GET|PUT {prefix}/{queue}/workers</c> (<c>{"count":n}</c> sets a manual count, <c>{"mode":"auto"}</c> hands it
    /// back to the autoscaler), <c>POST {prefix}/{queue}/pause</c> and <c>/resume</c>.
    /// </summary>
    /// <remarks>
    /// Secure by default: until an authorization policy is required on them (chain
    /// <c>.RequireAuthorization(...)</c> on the returned builder), the endpoints answer loopback clients only and refuse
    /// others with 403.
    /// </remarks>
    /// <param name="endpoints">The endpoint route builder.</param>
    /// <param name="prefix">The route prefix.</param>
    /// <returns>A builder for conventions such as <c>RequireAuthorization</c>.</returns>
    /// <exception cref="InvalidOperationException"><c>AddWorkQueue</c> was not called.</exception>
    public static IEndpointConventionBuilder MapWorkQueueAdmin(this IEndpointRouteBuilder endpoints, [StringSyntax("Route")] string prefix = "/admin/workqueue")
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        ArgumentException.ThrowIfNullOrWhiteSpace(prefix);
        if (endpoints.ServiceProvider.GetService<IWorkQueueProvider>() is null)
        {
            throw new InvalidOperationException(
                "Unable to find the WorkQueue services. Add them by calling 'services.AddWorkQueue()' before mapping the admin endpoints.");
        }

        var group = endpoints.MapGroup(prefix).WithTags("WorkQueue");
        group.AddEndpointFilter(LoopbackOnlyFilter.InvokeAsync);
        group.MapGet("/", AdminEndpoints.GetAll);
        group.MapGet("/{queue}", AdminEndpoints.GetOne);
        group.MapGet("/{queue}/depth", AdminEndpoints.GetDepth);
        group.MapGet("/{queue}/workers", AdminEndpoints.GetWorkers);
        group.MapPut("/{queue}/workers", AdminEndpoints.PutWorkers);
        group.MapPost("/{queue}/pause", AdminEndpoints.Pause);
        group.MapPost("/{queue}/resume", AdminEndpoints.Resume);

        var logger = endpoints.ServiceProvider.GetRequiredService<ILoggerFactory>().CreateLogger("WorkQueue.AspNetCore.Admin");
        Log.AdminMapped(logger, prefix);
        return group;
    }

    private static partial class Log
    {
        [LoggerMessage(400, LogLevel.Information, "WorkQueue admin endpoints mapped at {Prefix}. Until an authorization policy is required on them (.RequireAuthorization(...)), they answer loopback clients only and refuse others with 403.", EventName = "AdminEndpointsMapped")]
        public static partial void AdminMapped(ILogger logger, string prefix);
    }
}
