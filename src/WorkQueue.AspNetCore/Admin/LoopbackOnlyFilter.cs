using System.Net;
using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Http;

namespace WorkQueue.AspNetCore.Admin;

/// <summary>
/// Secure by default: unless the endpoint carries authorization metadata (the caller chained
/// <c>.RequireAuthorization(...)</c>, or explicitly <c>.AllowAnonymous()</c>), only loopback clients get an answer.
/// The check reads the endpoint's final metadata at request time, so conventions chained after
/// <c>MapWorkQueueAdmin</c> count.
/// </summary>
internal static class LoopbackOnlyFilter
{
    public static ValueTask<object?> InvokeAsync(EndpointFilterInvocationContext context, EndpointFilterDelegate next)
    {
        var http = context.HttpContext;
        var metadata = http.GetEndpoint()?.Metadata;
        bool secured = metadata is not null
            && (metadata.GetMetadata<IAuthorizeData>() is not null
                || metadata.GetMetadata<AuthorizationPolicy>() is not null
                || metadata.GetMetadata<IAllowAnonymous>() is not null);
        if (secured || IsLoopback(http.Connection.RemoteIpAddress))
        {
            return next(context);
        }

        return ValueTask.FromResult<object?>(TypedResults.Problem(
            statusCode: StatusCodes.Status403Forbidden,
            title: "Forbidden",
            detail: "The WorkQueue admin endpoints answer loopback clients only until an authorization policy is required on them (MapWorkQueueAdmin(...).RequireAuthorization(...))."));
    }

    private static bool IsLoopback(IPAddress? address) => address is not null && IPAddress.IsLoopback(address);
}
