using System.Net;
using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Http;

namespace WorkQueue.AspNetCore.Admin;

/// <summary>
/// Secure by default: unless the endpoint carries authorization metadata (the caller chained
/// <c>.RequireAuthorization(...)</c>, or explicitly <c>.AllowAnonymous()</c>), only loopback clients get an answer, only
/// when the request did not come through a proxy, and only when it names a loopback host (<c>localhost</c>,
/// <c>127.0.0.0/8</c> or <c>[::1]</c>, any port): a page on another domain that re-points its name to 127.0.0.1 (DNS
/// rebinding) is same-origin for the browser, but its requests carry its own name in <c>Host</c>.
/// The check reads the endpoint's final metadata at request time, so conventions chained after
/// <c>MapWorkQueueAdmin</c> count. It runs before the endpoint binds anything (see <see cref="AdminRequestGate"/>).
/// </summary>
internal static class LoopbackOnlyFilter
{
    /// <summary>Finds why the request must be refused, or <see langword="null"/> when it may go on. Reads headers and the connection only, never the body.</summary>
    /// <param name="http">The request's context, whose endpoint is already selected.</param>
    /// <returns>The refusal's detail, for a 403 problem, or <see langword="null"/>.</returns>
    public static string? FindRefusal(HttpContext http)
    {
        if (IsSecured(http.GetEndpoint()?.Metadata))
        {
            return null;
        }

        if (!IsLoopback(http.Connection.RemoteIpAddress))
        {
            return "The WorkQueue admin endpoints answer loopback clients only until an authorization policy is required on them (MapWorkQueueAdmin(...).RequireAuthorization(...)).";
        }

        // A reverse proxy on the same host connects from loopback for every client; the header it adds is the only
        // trace of that, so a proxied request is refused rather than trusted as local.
        if (ForwardingHeaders.FindFirst(http.Request.Headers) is { } header)
        {
            return $"The request carries the forwarding header '{header}': it came through a proxy, so its loopback address does not identify the client. Without an authorization policy the WorkQueue admin endpoints answer direct loopback clients only; require one (MapWorkQueueAdmin(...).RequireAuthorization(...)) to use them through a proxy.";
        }

        // A browser names the page that made a cross-origin request in Origin. An app's CORS default policy (AddCors +
        // UseCors) may approve that page's preflight and let it read answers; the admin endpoints do not rely on it.
        if (http.Request.Headers.Origin is { Count: > 0 } origin && !IsLoopbackOrigin(origin.ToString()))
        {
            return $"The request comes from a page at '{origin}', which is not on a loopback host: without an authorization policy the WorkQueue admin endpoints answer only pages on localhost, 127.0.0.0/8 or [::1], whatever CORS policy the app has. Require a policy (MapWorkQueueAdmin(...).RequireAuthorization(...)) to use them from another site.";
        }

        if (!IsLoopbackHost(http.Request.Host))
        {
            return $"The request names the host '{http.Request.Host.Value}', which is not a loopback name: without an authorization policy the WorkQueue admin endpoints answer only requests for localhost, 127.0.0.0/8 or [::1] (any port), so that a web page whose domain re-points to 127.0.0.1 (DNS rebinding) cannot use them. Require a policy (MapWorkQueueAdmin(...).RequireAuthorization(...)) to reach them by another name.";
        }

        return null;
    }

    /// <summary>Gets a value indicating whether a <c>Host</c> header names this machine's loopback: <c>localhost</c>, an IPv4 address in 127.0.0.0/8 or <c>[::1]</c>.</summary>
    public static bool IsLoopbackHost(HostString host)
    {
        if (!host.HasValue)
        {
            // HTTP/1.0 without Host: nothing names another domain.
            return true;
        }

        string name = host.Host;
        if (name.Equals("localhost", StringComparison.OrdinalIgnoreCase))
        {
            return true;
        }

        // HostString.Host keeps an IPv6 literal's brackets.
        var literal = name.StartsWith('[') && name.EndsWith(']') ? name[1..^1] : name;
        return IPAddress.TryParse(literal, out var address) && IPAddress.IsLoopback(address) && IsStrictLiteral(literal, address);
    }

    private static bool IsLoopbackOrigin(string origin) =>
        Uri.TryCreate(origin, UriKind.Absolute, out var uri)
        && (uri.Scheme == Uri.UriSchemeHttp || uri.Scheme == Uri.UriSchemeHttps)
        && IsLoopbackHost(HostString.FromUriComponent(uri));

    // IPAddress.TryParse also reads forms a DNS name could take ("127.1", "2130706433"): only the dotted quad or an IPv6
    // literal count, so a name is never mistaken for an address.
    private static bool IsStrictLiteral(string literal, IPAddress address) =>
        address.AddressFamily == System.Net.Sockets.AddressFamily.InterNetworkV6 || literal.Count(c => c == '.') == 3;

    /// <summary>Gets a value indicating whether the endpoint's metadata hands access control to authorization.</summary>
    public static bool IsSecured(EndpointMetadataCollection? metadata) =>
        metadata is not null
        && (metadata.GetMetadata<IAuthorizeData>() is not null
            || metadata.GetMetadata<AuthorizationPolicy>() is not null
            || metadata.GetMetadata<IAllowAnonymous>() is not null);

    private static bool IsLoopback(IPAddress? address) => address is not null && IPAddress.IsLoopback(address);
}
