using System.Net;

namespace PayCallbackApi.Admin;

/// <summary>
/// The protection of <c>GET /metrics</c> when no admin key is set, the same rule as WorkQueue's admin endpoints: only
/// direct loopback clients get an answer. A reverse proxy on the same host connects from loopback for every client, so a
/// request carrying a forwarding header is refused rather than trusted as local.
/// </summary>
internal static class LoopbackOnly
{
    /// <summary>The headers a proxy adds to say who the client was (RFC 7239, the <c>X-Forwarded-*</c> family, nginx's,
    /// and what ASP.NET Core's forwarded-headers middleware leaves behind).</summary>
    private static readonly string[] ForwardingHeaders =
        ["Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-IP", "X-Original-For", "X-Original-Host"];

    /// <summary>Adds the check to a branch of the pipeline, ahead of what the branch serves.</summary>
    public static void Apply(IApplicationBuilder branch) => branch.Use(InvokeAsync);

    private static Task InvokeAsync(HttpContext context, RequestDelegate next)
    {
        var remote = context.Connection.RemoteIpAddress;
        if (remote is null || !IPAddress.IsLoopback(remote))
        {
            return ForbiddenAsync(context, $"{context.Request.Path} answers loopback clients only until {AdminKeyAuthentication.ConfigKey} is set.");
        }

        foreach (string header in ForwardingHeaders)
        {
            if (context.Request.Headers.ContainsKey(header))
            {
                return ForbiddenAsync(context, $"The request carries the forwarding header '{header}': it came through a proxy, so its loopback address does not identify the client. Set {AdminKeyAuthentication.ConfigKey} and send it as {AdminKeyAuthentication.Header} to scrape through a proxy.");
            }
        }

        return next(context);
    }

    private static Task ForbiddenAsync(HttpContext context, string detail) =>
        TypedResults.Problem(statusCode: StatusCodes.Status403Forbidden, title: "Forbidden", detail: detail).ExecuteAsync(context);
}
