using System.Net;
using PayCallbackApi.Tests.TestSupport;

namespace PayCallbackApi.Tests.Admin;

public sealed class AdminKeyTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Theory]
    [InlineData(null, HttpStatusCode.Unauthorized)]
    [InlineData("wrong-key", HttpStatusCode.Forbidden)]
    [InlineData("the-admin-key", HttpStatusCode.OK)]
    public async Task AdminKeyConfigured_HeaderDecides(string? key, HttpStatusCode expected)
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue, new() { ["Admin:ApiKey"] = "the-admin-key" });
        using var client = app.CreateClient();
        using var request = new HttpRequestMessage(HttpMethod.Get, "/admin/workqueue/payments/depth");
        if (key is not null)
        {
            request.Headers.Add("X-Admin-Key", key);
        }

        using var response = await client.SendAsync(request);

        Assert.Equal(expected, response.StatusCode);
    }

    [Fact]
    public async Task AdminKeyUnset_LoopbackClientIsServed()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue);
        using var client = app.CreateClient();

        using var response = await client.GetAsync("/admin/workqueue/legacy/workers");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Contains("\"max\":256", await response.Content.ReadAsStringAsync());
    }

    [Theory]
    [InlineData(null, "")]
    [InlineData("the-admin-key", "X-Admin-Key")]
    public async Task Dashboard_IsMappedAtAdminUiAndSendsTheKeyHeaderOnlyWhenAKeyIsSet(string? key, string header)
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue, new() { ["Admin:ApiKey"] = key });
        using var client = app.CreateClient();

        using var response = await client.GetAsync("/admin/workqueue/ui");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        string html = await response.Content.ReadAsStringAsync();
        Assert.Contains("""<meta name="workqueue-admin-prefix" content="/admin/workqueue">""", html);
        Assert.Contains($"""<meta name="workqueue-api-key-header" content="{header}">""", html);
        Assert.Contains("frame-ancestors 'none'", Assert.Single(response.Headers.GetValues("Content-Security-Policy")));
    }

    [Fact]
    public async Task AdminKeyConfigured_HistoryNeedsTheKeyToo()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue, new() { ["Admin:ApiKey"] = "the-admin-key" });
        using var client = app.CreateClient();

        using var anonymous = await client.GetAsync("/admin/workqueue/history");
        using var request = new HttpRequestMessage(HttpMethod.Get, "/admin/workqueue/history");
        request.Headers.Add("X-Admin-Key", "the-admin-key");
        using var withKey = await client.SendAsync(request);

        Assert.Equal(HttpStatusCode.Unauthorized, anonymous.StatusCode);
        Assert.Equal(HttpStatusCode.OK, withKey.StatusCode);
        Assert.Contains("\"legacy\"", await withKey.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task Health_ReadyAndLive_AreHealthyOnceWarm()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue);
        using var client = app.CreateClient();

        using var ready = await client.GetAsync("/health/ready");
        using var live = await client.GetAsync("/health/live");

        Assert.Equal(HttpStatusCode.OK, ready.StatusCode);
        Assert.Equal(HttpStatusCode.OK, live.StatusCode);
    }
}
