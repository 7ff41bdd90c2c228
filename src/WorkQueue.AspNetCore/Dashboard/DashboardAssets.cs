using System.Text;
using System.Text.Encodings.Web;

namespace WorkQueue.AspNetCore.Dashboard;

/// <summary>The page's HTML, script and style sheet, embedded in the assembly.</summary>
internal static class DashboardAssets
{
    public static readonly byte[] Script = Load("dashboard.js");

    public static readonly byte[] StyleSheet = Load("dashboard.css");

    private static readonly string IndexTemplate = Encoding.UTF8.GetString(Load("index.html"));

    /// <summary>
    /// Renders the page shell. It holds no queue data: only where its assets are and where the admin endpoints are,
    /// HTML-encoded into attributes.
    /// </summary>
    /// <param name="assetBase">The path the page's assets are served under (path base included).</param>
    /// <param name="adminPrefix">The admin endpoints' prefix (path base included).</param>
    /// <param name="apiKeyHeader">The header the page sends an API key in, or <see langword="null"/>.</param>
    /// <returns>The page.</returns>
    public static string RenderIndex(string assetBase, string adminPrefix, string? apiKeyHeader)
    {
        var html = HtmlEncoder.Default;
        return IndexTemplate
            .Replace("{{ASSET_BASE}}", html.Encode(assetBase), StringComparison.Ordinal)
            .Replace("{{ADMIN_PREFIX}}", html.Encode(adminPrefix), StringComparison.Ordinal)
            .Replace("{{API_KEY_HEADER}}", html.Encode(apiKeyHeader ?? string.Empty), StringComparison.Ordinal);
    }

    private static byte[] Load(string name)
    {
        string resource = $"WorkQueue.AspNetCore.Dashboard.Assets.{name}";
        using var stream = typeof(DashboardAssets).Assembly.GetManifestResourceStream(resource)
            ?? throw new InvalidOperationException($"The dashboard asset '{resource}' is missing from the assembly.");
        using var buffer = new MemoryStream();
        stream.CopyTo(buffer);
        return buffer.ToArray();
    }
}
