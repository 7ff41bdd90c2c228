using System.Text;
using Microsoft.AspNetCore.Http;

namespace WorkQueue.AspNetCore.Dashboard;

/// <summary>Serves the page shell and its assets, with headers that keep the page to its own code.</summary>
internal sealed class DashboardEndpoints(string pattern, WorkQueueDashboardOptions options)
{
    /// <summary>
    /// The page runs only its own script and style sheet, talks only to its own origin, submits no form, and may not
    /// be framed (clickjacking).
    /// </summary>
    public const string ContentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private readonly string _pattern = pattern.TrimEnd('/');
    private readonly string _adminPrefix = options.AdminPrefix.TrimEnd('/');
    private readonly string? _apiKeyHeader = options.ApiKeyHeader;

    public IResult Index(HttpContext http)
    {
        string pathBase = http.Request.PathBase.Value ?? string.Empty;
        string page = DashboardAssets.RenderIndex(pathBase + _pattern, pathBase + _adminPrefix, _apiKeyHeader);
        return Serve(http, Encoding.UTF8.GetBytes(page), "text/html; charset=utf-8");
    }

    public static IResult Script(HttpContext http) => Serve(http, DashboardAssets.Script, "text/javascript; charset=utf-8");

    public static IResult StyleSheet(HttpContext http) => Serve(http, DashboardAssets.StyleSheet, "text/css; charset=utf-8");

    private static IResult Serve(HttpContext http, byte[] content, string contentType)
    {
        var headers = http.Response.Headers;
        headers.ContentSecurityPolicy = ContentSecurityPolicy;
        headers.XContentTypeOptions = "nosniff";
        headers.XFrameOptions = "DENY";
        headers["Referrer-Policy"] = "no-referrer";
        headers.CacheControl = "no-cache";
        return TypedResults.Bytes(content, contentType);
    }
}
