using System.Diagnostics.CodeAnalysis;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Json;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkQueue;
using WorkQueue.AspNetCore;
using WorkQueue.AspNetCore.Admin;

namespace Microsoft.AspNetCore.Builder;

/// <summary>
/// Maps the WorkQueue admin endpoints and dashboard.
/// </summary>
public static partial class WorkQueueEndpointRouteBuilderExtensions
{
    /// <summary>
    /// Maps the admin endpoints (JSON, camelCase) under <paramref name="prefix"/>:
    /// <c>GET {prefix}</c> (every queue), <c>GET {prefix}/{queue}</c>, <c>GET {prefix}/{queue}/depth</c>,
    /// <c>GET|PUT {prefix}/{queue}/workers</c> (<c>{"count":n}</c> sets a manual count, <c>{"mode":"auto"}</c> hands it
    /// back to the autoscaler), <c>POST {prefix}/{queue}/pause</c> and <c>/resume</c>,
    /// <c>GET {prefix}/{queue}/dead-letters</c> (for a durable queue, its dead-letter stream, newest first, with
    /// <c>POST {prefix}/{queue}/dead-letters/{id}/requeue</c> and <c>DELETE {prefix}/{queue}/dead-letters/{id}</c>) and
    /// <c>GET {prefix}/history</c> (the samples kept by <c>AddWorkQueueDashboard</c>). A durable queue's state carries a
    /// <c>durable</c> section: its cluster-wide figures from Redis. <c>GET {prefix}/{queue}/jobs/{id}</c> gives a tracked job
    /// of an in-memory queue, or a durable queue's job read from Redis with its <c>attempts</c> (see
    /// <c>IWorkQueue.GetJobAsync</c>), and <c>DELETE {prefix}/{queue}/jobs/{id}</c> cancels it:
    /// 200 with <c>{"outcome":"canceled"|"cancelRequested","job":...}</c>, 409 when it had already ended (the problem's
    /// <c>job</c> says how), 404 for an unknown queue or job, 400 naming <c>id</c> for a malformed id, 503 when a durable
    /// queue's Redis cannot be reached (500 when it refuses a call; neither quotes Redis's error, which is logged).
    /// <c>GET {prefix}/{queue}/jobs?state=&amp;type=&amp;error=&amp;cursor=&amp;limit=</c> searches an in-memory queue's
    /// tracked jobs (see <c>IWorkQueue.FindJobsAsync</c>): <c>{"jobs":[...],"next":cursor|null,"scanned":n}</c>, 400 naming
    /// the field for a bad state, limit or cursor, 501 for a durable queue. Payloads are left out unless
    /// <see cref="WorkQueue.AspNetCore.WorkQueueAdminOptions.ShowPayloads"/> is set.
    /// </summary>
    /// <remarks>
    /// <para>
    /// Secure by default: until an authorization policy is required on them (chain
    /// <c>.RequireAuthorization(...)</c> on the returned builder), the endpoints answer direct loopback clients only and
    /// refuse others with 403, including loopback requests that carry forwarding headers (<c>X-Forwarded-For</c>,
    /// <c>Forwarded</c>, ...). Behind a reverse proxy on the same host, only an authorization policy protects them; a
    /// warning is logged at startup when forwarded-headers handling is on and no policy is required. The check runs before a
    /// route binds or reads anything: a refused client gets 403 whatever its body.
    /// </para>
    /// <para>
    /// With or without a policy, every route refuses with 403 what a browser sends for a page of another origin, reads
    /// included: a request whose <c>Sec-Fetch-Site</c> is not <c>same-origin</c> or <c>none</c> (<c>same-site</c>
    /// included: a sibling subdomain or another port is another origin). A request without the header (not from a
    /// browser) is left to the other checks.
    /// </para>
    /// <para>
    /// The state-changing calls (<c>PUT .../workers</c>, <c>POST .../pause</c>, <c>POST .../resume</c>, requeue, delete and job cancel) need
    /// <c>Content-Type: application/json</c> (415 otherwise; pause and resume take an empty body or <c>{}</c>), so that a
    /// cross-site form or image cannot make them.
    /// </para>
    /// <para>
    /// The responses are written with the app's HTTP JSON options (<c>ConfigureHttpJsonOptions</c>), to which this call
    /// appends WorkQueue's source-generated contract for them, so the routes also answer in a trimmed or native AOT app.
    /// </para>
    /// </remarks>
    /// <param name="endpoints">The endpoint route builder.</param>
    /// <param name="prefix">The route prefix.</param>
    /// <param name="configure">Configures the endpoints: whether job routes show payloads (<see cref="WorkQueueAdminOptions.ShowPayloads"/>, off by default because payloads may hold personal data).</param>
    /// <returns>A builder for conventions such as <c>RequireAuthorization</c>.</returns>
    /// <exception cref="InvalidOperationException"><c>AddWorkQueue</c> was not called.</exception>
    /// <exception cref="ArgumentException">An option is not valid.</exception>
    public static IEndpointConventionBuilder MapWorkQueueAdmin(
        this IEndpointRouteBuilder endpoints,
        [StringSyntax("Route")] string prefix = "/admin/workqueue",
        Action<WorkQueueAdminOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        ArgumentException.ThrowIfNullOrWhiteSpace(prefix);
        var options = new WorkQueueAdminOptions();
        configure?.Invoke(options);
        if (options.MaxPayloadLength is < 1 or > WorkQueueAdminOptions.MaxPayloadLengthLimit)
        {
            throw new ArgumentException(
                $"WorkQueueAdminOptions.MaxPayloadLength must be from 1 to {WorkQueueAdminOptions.MaxPayloadLengthLimit}; it was {options.MaxPayloadLength}.",
                nameof(configure));
        }

        if (endpoints.ServiceProvider.GetService<IWorkQueueProvider>() is null)
        {
            throw new InvalidOperationException(
                "Unable to find the WorkQueue services. Add them by calling 'services.AddWorkQueue()' before mapping the admin endpoints.");
        }

        var logger = endpoints.ServiceProvider.GetRequiredService<ILoggerFactory>().CreateLogger("WorkQueue.AspNetCore.Admin");
        AddAdminJson(endpoints.ServiceProvider, logger);

        // Payloads are written as the app writes its own JSON: in a trimmed or native AOT app, these options know the
        // types of the app's source-generated contexts and no others.
        var payloadJson = endpoints.ServiceProvider.GetService<IOptions<JsonOptions>>()?.Value.SerializerOptions;
        var group = endpoints.MapGroup(prefix).WithTags("WorkQueue").WithMetadata(new AdminEndpointMetadata(prefix, options.ShowPayloads, options.MaxPayloadLength, payloadJson));
        AdminRequestGate.Add(group, static http => CrossSiteCheck.FindRefusal(http) ?? LoopbackOnlyFilter.FindRefusal(http));
        group.MapGet("/", AdminEndpoints.GetAll);
        group.MapGet("/history", AdminEndpoints.GetHistory);
        group.MapGet("/recurring", AdminEndpoints.GetRecurring);
        group.MapGet("/threadpool", AdminEndpoints.GetThreadPool);
        group.MapPost("/recurring/{id}/trigger", AdminEndpoints.TriggerRecurring).AddEndpointFilter(JsonOnlyFilter.InvokeAsync);
        group.MapPost("/recurring/{id}/pause", AdminEndpoints.PauseRecurring).AddEndpointFilter(JsonOnlyFilter.InvokeAsync);
        group.MapPost("/recurring/{id}/resume", AdminEndpoints.ResumeRecurring).AddEndpointFilter(JsonOnlyFilter.InvokeAsync);
        group.MapDelete("/recurring/{id}", AdminEndpoints.RemoveRecurring).AddEndpointFilter(JsonOnlyFilter.InvokeAsync);
        group.MapGet("/{queue}", AdminEndpoints.GetOne);
        group.MapGet("/{queue}/depth", AdminEndpoints.GetDepth);
        group.MapGet("/{queue}/workers", AdminEndpoints.GetWorkers);
        group.MapGet("/{queue}/dead-letters", AdminEndpoints.GetDeadLetters);
        group.MapGet("/{queue}/scheduled", AdminEndpoints.GetScheduled);
        group.MapDelete("/{queue}/scheduled/{id}", AdminEndpoints.CancelScheduled).AddEndpointFilter(JsonOnlyFilter.InvokeAsync);
        group.MapGet("/{queue}/jobs", AdminEndpoints.FindJobs);
        group.MapGet("/{queue}/jobs/{id}", AdminEndpoints.GetJob);
        group.MapDelete("/{queue}/jobs/{id}", AdminEndpoints.CancelJob).AddEndpointFilter(JsonOnlyFilter.InvokeAsync);
        group.MapPut("/{queue}/workers", AdminEndpoints.PutWorkers).AddEndpointFilter(JsonOnlyFilter.InvokeAsync);
        group.MapPost("/{queue}/pause", AdminEndpoints.Pause).AddEndpointFilter(JsonOnlyFilter.InvokeAsync);
        group.MapPost("/{queue}/resume", AdminEndpoints.Resume).AddEndpointFilter(JsonOnlyFilter.InvokeAsync);
        group.MapPost("/{queue}/dead-letters/{id}/requeue", AdminEndpoints.RequeueDeadLetter).AddEndpointFilter(JsonOnlyFilter.InvokeAsync);
        group.MapPost("/{queue}/dead-letters/requeue", AdminEndpoints.RequeueDeadLetters).AddEndpointFilter(JsonOnlyFilter.InvokeAsync);
        group.MapPost("/{queue}/dead-letters/delete", AdminEndpoints.DeleteDeadLetters).AddEndpointFilter(JsonOnlyFilter.InvokeAsync);
        group.MapDelete("/{queue}/dead-letters/{id}", AdminEndpoints.DeleteDeadLetter).AddEndpointFilter(JsonOnlyFilter.InvokeAsync);

        Log.AdminMapped(logger, prefix);
        AdminExposureCheck.Register(endpoints, logger);
        return group;
    }

    /// <summary>
    /// Lets the app's HTTP JSON options write the admin's responses and problems without reflection (see
    /// <see cref="AdminJsonContext"/>); says so when they were already in use and reflection is off, the one case in which
    /// the routes would answer 500.
    /// </summary>
    private static void AddAdminJson(IServiceProvider services, ILogger logger)
    {
        if (!AdminJsonContext.AddTo(services) && !System.Text.Json.JsonSerializer.IsReflectionEnabledByDefault)
        {
            Log.AdminJsonNotAdded(logger);
        }
    }

    private static partial class Log
    {
        [LoggerMessage(405, LogLevel.Warning, "The app's HTTP JSON options (JsonOptions) were already in use when the WorkQueue admin endpoints or dashboard were mapped, and reflection-based JSON is off (a trimmed or native AOT app): WorkQueue could not add its source-generated contract to them, so the admin routes cannot write their responses. Map them before anything writes JSON.", EventName = "AdminJsonNotAdded")]
        public static partial void AdminJsonNotAdded(ILogger logger);

        [LoggerMessage(400, LogLevel.Information, "WorkQueue admin endpoints mapped at {Prefix}. Until an authorization policy is required on them (.RequireAuthorization(...)), they answer direct loopback clients only and refuse others (and proxied requests) with 403.", EventName = "AdminEndpointsMapped")]
        public static partial void AdminMapped(ILogger logger, string prefix);

        [LoggerMessage(403, LogLevel.Information, "WorkQueue dashboard mapped at {Pattern}; it calls the admin endpoints at {AdminPrefix}.", EventName = "DashboardMapped")]
        public static partial void DashboardMapped(ILogger logger, string pattern, string adminPrefix);
    }
}
