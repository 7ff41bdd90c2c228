using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Dashboard;

public sealed class DashboardEndpointsTests : IAsyncLifetime
{
    private const string HostilePrefix = "/admin/\"><script>alert(1)</script>";
    private TestApp _app = null!;

    public async ValueTask InitializeAsync() =>
        _app = await TestApp.StartAsync(
            b => b.Services.AddWorkQueue().Services.AddWorkQueueDashboard(),
            app =>
            {
                app.MapWorkQueueAdmin();
                app.MapWorkQueueDashboard();
                app.MapWorkQueueDashboard("/hostile/ui", o => { o.AdminPrefix = HostilePrefix; o.ApiKeyHeader = "X-Admin-Key"; });
            });

    public async ValueTask DisposeAsync() => await _app.DisposeAsync();

    [Theory]
    [InlineData("/admin/workqueue/ui", "text/html")]
    [InlineData("/admin/workqueue/ui/", "text/html")]
    [InlineData("/admin/workqueue/ui/dashboard.js", "text/javascript")]
    [InlineData("/admin/workqueue/ui/dashboard.css", "text/css")]
    public async Task Get_PageAndAssets_ServedWithStrictSecurityHeaders(string path, string mediaType)
    {
        using var response = await _app.Client.GetAsync(path);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(mediaType, response.Content.Headers.ContentType?.MediaType);
        string csp = Assert.Single(response.Headers.GetValues("Content-Security-Policy"));
        Assert.Contains("default-src 'none'", csp);
        Assert.Contains("script-src 'self'", csp);
        Assert.Contains("frame-ancestors 'none'", csp);
        Assert.DoesNotContain("unsafe-inline", csp);
        Assert.Equal("nosniff", Assert.Single(response.Headers.GetValues("X-Content-Type-Options")));
        Assert.NotEmpty(await response.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public async Task Get_Page_HoldsNoInlineScriptOrStyleAndPointsAtTheAdminPrefix()
    {
        string html = await _app.Client.GetStringAsync("/admin/workqueue/ui");

        Assert.Contains("""<meta name="workqueue-admin-prefix" content="/admin/workqueue">""", html);
        Assert.Contains("""<script src="/admin/workqueue/ui/dashboard.js" defer></script>""", html);
        Assert.Single(System.Text.RegularExpressions.Regex.Matches(html, "<script"));
        Assert.DoesNotContain("<style", html);
        Assert.DoesNotContain("style=", html);
    }

    [Fact]
    public async Task Get_Page_HostilePrefixIsHtmlEncoded()
    {
        string html = await _app.Client.GetStringAsync("/hostile/ui");

        Assert.DoesNotContain("<script>alert(1)", html);
        Assert.Contains("&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;", html);
        Assert.Contains("""<meta name="workqueue-api-key-header" content="X-Admin-Key">""", html);
    }

    [Fact]
    public void MapWorkQueueDashboard_WithoutAddWorkQueueDashboard_ThrowsNamingIt()
    {
        var ex = Assert.Throws<InvalidOperationException>(() => TestApp.Build(b => b.Services.AddWorkQueue(), app => app.MapWorkQueueDashboard()));

        Assert.Contains("AddWorkQueueDashboard", ex.Message);
    }

    [Fact]
    public void MapWorkQueueDashboard_WithoutAddWorkQueue_ThrowsNamingIt()
    {
        var ex = Assert.Throws<InvalidOperationException>(() => TestApp.Build(_ => { }, app => app.MapWorkQueueDashboard()));

        Assert.Contains("AddWorkQueue()", ex.Message);
    }

    [Theory]
    [InlineData("admin/workqueue", null, "AdminPrefix")]
    [InlineData("", null, "AdminPrefix")]
    [InlineData("/admin/workqueue", "X Admin: Key", "ApiKeyHeader")]
    [InlineData("/admin/workqueue", "", "ApiKeyHeader")]
    public void MapWorkQueueDashboard_InvalidOption_ThrowsNamingTheSettingAndValue(string prefix, string? header, string setting)
    {
        var ex = Assert.Throws<ArgumentException>(() => TestApp.Build(
            b => b.Services.AddWorkQueue().Services.AddWorkQueueDashboard(),
            app => app.MapWorkQueueDashboard(configure: o => { o.AdminPrefix = prefix; o.ApiKeyHeader = header; })));

        Assert.Contains($"WorkQueueDashboardOptions.{setting}", ex.Message);
        Assert.Contains($"'{(setting == "AdminPrefix" ? prefix : header)}'", ex.Message);
    }

    [Fact]
    public void AddWorkQueueDashboard_CalledTwice_RegistersTheSamplerOnce()
    {
        var services = new ServiceCollection().AddWorkQueueDashboard().AddWorkQueueDashboard();

        Assert.Single(services, d => d.ImplementationType == typeof(WorkQueue.AspNetCore.Dashboard.DashboardSampler));
        Assert.Single(services, d => d.ServiceType == typeof(WorkQueue.AspNetCore.Dashboard.DashboardHistory));
    }
}
