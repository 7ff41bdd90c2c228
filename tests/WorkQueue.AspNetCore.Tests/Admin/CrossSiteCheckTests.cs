using System.Net;
using System.Net.Http.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Admin;

/// <summary>
/// Requests a browser makes for a page of another origin (<c>Sec-Fetch-Site</c> other than <c>same-origin</c> or
/// <c>none</c>) are refused on every admin route and the dashboard, reads included, with or without an authorization
/// policy: an image or a no-cors fetch on a page the operator opens carries no <c>Origin</c>.
/// </summary>
public sealed class CrossSiteCheckTests : IAsyncLifetime
{
    private TestApp _app = null!;

    public static TheoryData<string, string, string> Refused => Cross(["cross-site", "same-site"]);

    public static TheoryData<string, string, string> Allowed => Cross(["same-origin", "none", ""]);

    private IWorkQueueControl Default => _app.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single(q => q.Name == "default");

    public async ValueTask InitializeAsync() =>
        _app = await TestApp.StartAsync(
            b =>
            {
                b.Services.AddWorkQueue();
                b.Services.AddWorkQueueDashboard();
                b.Services.AddAuthorization();
            },
            app =>
            {
                app.UseAuthorization();
                app.MapWorkQueueAdmin("/admin/workqueue");
                app.MapWorkQueueAdmin("/open/workqueue").AllowAnonymous();
                app.MapWorkQueueDashboard("/admin/workqueue/ui");
            });

    public async ValueTask DisposeAsync() => await _app.DisposeAsync();

    [Theory]
    [MemberData(nameof(Refused))]
    public async Task Request_FromAnotherOriginsPage_Answers403SayingWhyAndChangesNothing(string method, string path, string site)
    {
        using var response = await SendAsync(method, path, site);

        Assert.Equal(HttpStatusCode.Forbidden, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        string body = await response.Content.ReadAsStringAsync();
        Assert.Contains($"Sec-Fetch-Site: {site}", body, StringComparison.Ordinal);
        Assert.DoesNotContain("\"depth\"", body, StringComparison.Ordinal);
        Assert.False(Default.GetSnapshot().IsPaused);
    }

    [Theory]
    [MemberData(nameof(Allowed))]
    public async Task Request_FromItsOwnOriginOrTypedOrNotABrowser_IsServed(string method, string path, string site)
    {
        try
        {
            using var response = await SendAsync(method, path, site);

            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }
        finally
        {
            Default.Resume();
        }
    }

    [Theory]
    [InlineData("cross-site")]
    [InlineData("same-site")]
    public async Task DashboardPage_TopLevelNavigationFromAnotherSite_IsServed(string site)
    {
        // A link in a runbook or an alert, or the redirect back from a sign-in page: the page holds no data, and its own
        // calls are same-origin.
        using var response = await SendAsync("GET", "/admin/workqueue/ui", site, mode: "navigate", destination: "document");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/html", response.Content.Headers.ContentType?.MediaType);
    }

    [Theory]
    [InlineData("GET", "/admin/workqueue/ui", "navigate", "iframe")]
    [InlineData("GET", "/admin/workqueue/ui/dashboard.js", "navigate", "document")]
    [InlineData("GET", "/admin/workqueue/default/depth", "navigate", "document")]
    public async Task NavigationFromAnotherSite_ToAnythingButTheDashboardPage_Answers403(string method, string path, string mode, string destination)
    {
        using var response = await SendAsync(method, path, "cross-site", mode, destination);

        Assert.Equal(HttpStatusCode.Forbidden, response.StatusCode);
    }

    private static TheoryData<string, string, string> Cross(string[] sites)
    {
        string[][] routes =
        [
            ["GET", "/admin/workqueue/default/depth"],
            ["POST", "/admin/workqueue/default/pause"],
            ["GET", "/open/workqueue/default/depth"],
            ["POST", "/open/workqueue/default/pause"],
            ["GET", "/admin/workqueue/ui"],
            ["GET", "/admin/workqueue/ui/dashboard.js"],
        ];
        var data = new TheoryData<string, string, string>();
        foreach (var route in routes)
        {
            foreach (string site in sites)
            {
                data.Add(route[0], route[1], site);
            }
        }

        return data;
    }

    private async Task<HttpResponseMessage> SendAsync(string method, string path, string site, string? mode = null, string? destination = null)
    {
        using var request = new HttpRequestMessage(new HttpMethod(method), path);
        if (method == "POST")
        {
            request.Content = JsonContent.Create(new { });
        }

        if (site.Length > 0)
        {
            request.Headers.Add("Sec-Fetch-Site", site);
        }

        if (mode is not null)
        {
            request.Headers.Add("Sec-Fetch-Mode", mode);
        }

        if (destination is not null)
        {
            request.Headers.Add("Sec-Fetch-Dest", destination);
        }

        return await _app.Client.SendAsync(request);
    }
}
