using System.Net;
using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Http;

namespace WorkQueue.AspNetCore.Admin;

/// <summary>
/// Secure by default: unless the endpoint carries authorization metadata (the caller chained
/// <c>.RequireAuthorization(...)</c>, or explicitly <c>.AllowAnonymous()</c>), only loopback clients get an answer, and
/// only when the request did not come through a proxy.
/// The check reads the endpoint's final metadata at request time, so conventions chained after
/// <c>MapWorkQueueAdmin</c> count.
/// </summary>
internal static class LoopbackOnlyFilter
{
    public static ValueTask<object?> InvokeAsync(EndpointFilterInvocationContext context, EndpointFilterDelegate next)
    {
        var http = context.HttpContext;
        if (IsSecured(http.GetEndpoint()?.Metadata))
        {
            return next(context);
        }

        if (!IsLoopback(http.Connection.RemoteIpAddress))
        {
            return Forbidden("The WorkQueue admin endpoints answer loopback clients only until an authorization policy is required on them (MapWorkQueueAdmin(...).RequireAuthorization(...)).");
        }

        // A reverse proxy on the same host connects from loopback for every client; the header it adds is the only
        // trace of that, so a proxied request is refused rather than trusted as local.
        if (ForwardingHeaders.FindFirst(http.Request.Headers) is { } header)
        {
            return Forbidden($"The request carries the forwarding header '{header}': it came through a proxy, so its loopback address does not identify the client. Without an authorization policy the WorkQueue admin endpoints answer direct loopback clients only; require one (MapWorkQueueAdmin(...).RequireAuthorization(...)) to use them through a proxy.");
        }

        return next(context);
    }

    /// <summary>Gets a value indicating whether the endpoint's metadata hands access control to authorization.</summary>
    public static bool IsSecured(EndpointMetadataCollection? metadata) =>
        metadata is not null
        && (metadata.GetMetadata<IAuthorizeData>() is not null
            || metadata.GetMetadata<AuthorizationPolicy>() is not null
            || metadata.GetMetadata<IAllowAnonymous>() is not null);

    private static ValueTask<object?> Forbidden(string detail) =>
        ValueTask.FromResult<object?>(TypedResults.Problem(statusCode: StatusCodes.Status403Forbidden, title: "Forbidden", detail: detail));

    private static bool IsLoopback(IPAddress? address) => address is not null && IPAddress.IsLoopback(address);
}
