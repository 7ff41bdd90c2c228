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

        // DNS rebinding: a page whose domain re-points to 127.0.0.1 is same-origin for the browser, but names its own
        // domain in Host. The rule WorkQueue's admin endpoints apply too.
        if (!IsLoopbackHost(context.Request.Host.Host))
        {
            return ForbiddenAsync(context, $"The request names the host '{context.Request.Host.Value}', which is not a loopback name: {context.Request.Path} answers only requests for localhost, 127.0.0.0/8 or [::1] until {AdminKeyAuthentication.ConfigKey} is set (DNS rebinding).");
        }

        return next(context);
    }

    private static bool IsLoopbackHost(string host)
    {
        if (host.Length == 0 || host.Equals("localhost", StringComparison.OrdinalIgnoreCase))
        {
            return true;
        }

        // Only an IPv6 literal or a dotted quad: IPAddress.TryParse also reads "127.1" or "2130706433", which are names.
        string literal = host.StartsWith('[') && host.EndsWith(']') ? host[1..^1] : host;
        return IPAddress.TryParse(literal, out var address)
            && IPAddress.IsLoopback(address)
            && (address.AddressFamily == System.Net.Sockets.AddressFamily.InterNetworkV6 || literal.Count(c => c == '.') == 3);
    }

    private static Task ForbiddenAsync(HttpContext context, string detail) =>
        TypedResults.Problem(statusCode: StatusCodes.Status403Forbidden, title: "Forbidden", detail: detail).ExecuteAsync(context);
}
