using Microsoft.AspNetCore.Http;

namespace WorkQueue.AspNetCore.Admin;

/// <summary>
/// Refuses the requests a browser makes for a page of another origin, on every admin route and the dashboard, reads
/// included, whatever authorization applies.
/// </summary>
/// <remarks>
/// <para>
/// Browsers say whose page a request is for in <c>Sec-Fetch-Site</c> (Fetch Metadata): <c>same-origin</c> (the
/// dashboard's own calls), <c>none</c> (an address the user typed or bookmarked), <c>same-site</c> (a page on a sibling
/// host: another subdomain, or another port of the same host, which is another origin) or <c>cross-site</c>. An image or
/// a <c>no-cors</c> fetch on a page the operator opens sends no <c>Origin</c> and needs no preflight, yet goes out with
/// the operator's cookies (or, on the loopback-only default, from loopback): only the first two values are answered.
/// A request without the header comes from a client that is not a browser (or one too old to send it), and is left to
/// the other checks.
/// </para>
/// <para>
/// One exception, the rule of Google's Resource Isolation Policy for pages: the dashboard page itself may be opened
/// by a top-level navigation from another site (a link in a runbook or an alert, or the redirect back from a sign-in
/// page), since it holds no data, cannot be framed, acts on nothing in its address, and its own calls are same-origin.
/// </para>
/// </remarks>
internal static class CrossSiteCheck
{
    private const string SiteHeader = "Sec-Fetch-Site";

    /// <summary>Finds why an admin request must be refused, or <see langword="null"/> when its origin may be answered.</summary>
    /// <param name="http">The request's context.</param>
    /// <returns>The refusal's detail, for a 403 problem, or <see langword="null"/>.</returns>
    public static string? FindRefusal(HttpContext http) => FindRefusal(http, navigable: false);

    /// <summary>Finds why a request for the dashboard page must be refused, or <see langword="null"/>: as <see cref="FindRefusal(HttpContext)"/>, but a top-level navigation from any site is answered.</summary>
    /// <param name="http">The request's context.</param>
    /// <returns>The refusal's detail, for a 403 problem, or <see langword="null"/>.</returns>
    public static string? FindPageRefusal(HttpContext http) => FindRefusal(http, navigable: true);

    private static string? FindRefusal(HttpContext http, bool navigable)
    {
        var headers = http.Request.Headers;
        if (!headers.TryGetValue(SiteHeader, out var values))
        {
            return null;
        }

        string site = values.ToString();
        if (site is "same-origin" or "none")
        {
            return null;
        }

        if (navigable && IsTopLevelNavigation(http.Request))
        {
            return null;
        }

        return $"The request carries '{SiteHeader}: {site}': a browser sent it for a page that is not of this origin. The WorkQueue admin endpoints and dashboard answer only their own pages ('same-origin') and addresses opened directly ('none'), so that a page on another site (or another host or port of this one) cannot use them through your browser. Open the dashboard by its address.";
    }

    // Only a GET of a whole window: a form's POST, a frame and a subresource are not.
    private static bool IsTopLevelNavigation(HttpRequest request) =>
        HttpMethods.IsGet(request.Method)
        && request.Headers["Sec-Fetch-Mode"] == "navigate"
        && request.Headers["Sec-Fetch-Dest"] == "document";
}
