using Microsoft.AspNetCore.Http;

namespace WorkQueue.AspNetCore.Admin;

/// <summary>The request headers a proxy adds to say who the client was.</summary>
internal static class ForwardingHeaders
{
    /// <summary>
    /// Gets the headers, in the order they are checked: the standard one (RFC 7239), the de-facto <c>X-Forwarded-*</c>
    /// family, nginx's <c>X-Real-IP</c>, and <c>X-Original-For</c>/<c>X-Original-Host</c>, which ASP.NET Core's
    /// forwarded-headers middleware leaves behind after it consumed the <c>X-Forwarded-*</c> ones.
    /// </summary>
    public static IReadOnlyList<string> Names { get; } =
    [
        "Forwarded",
        "X-Forwarded-For",
        "X-Forwarded-Host",
        "X-Forwarded-Proto",
        "X-Real-IP",
        "X-Original-For",
        "X-Original-Host",
    ];

    /// <summary>Finds the first forwarding header the request carries.</summary>
    /// <param name="headers">The request headers.</param>
    /// <returns>The header's name, or <see langword="null"/> when the request carries none.</returns>
    public static string? FindFirst(IHeaderDictionary headers)
    {
        foreach (string name in Names)
        {
            if (headers.ContainsKey(name))
            {
                return name;
            }
        }

        return null;
    }
}
