using System.Globalization;
using System.Net;
using System.Text.RegularExpressions;
using PayCallbackApi.Tests.TestSupport;

namespace PayCallbackApi.Tests.Diagnostics;

/// <summary><c>GET /metrics</c> (<c>Diagnostics/OpenTelemetrySetup.cs</c>): Prometheus text, protected like the admin endpoints.</summary>
public sealed class MetricsEndpointTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const string AdminKey = "the-admin-key";

    [Theory]
    [InlineData("rebind.attacker.example", HttpStatusCode.Forbidden)]
    [InlineData("127.0.0.1.nip.io", HttpStatusCode.Forbidden)]
    [InlineData("localhost:5080", HttpStatusCode.OK)]
    [InlineData("127.0.0.1", HttpStatusCode.OK)]
    public async Task NoAdminKey_HostDecides_AgainstDnsRebinding(string host, HttpStatusCode expected)
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue);
        using var client = app.CreateClient();
        using var request = new HttpRequestMessage(HttpMethod.Get, "/metrics");
        request.Headers.Host = host;
        using var response = await client.SendAsync(request);
        Assert.Equal(expected, response.StatusCode);
        if (expected == HttpStatusCode.Forbidden)
        {
            Assert.Contains("DNS rebinding", await response.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task AfterCallbacks_LoopbackScrape_HasWorkQueueAndThreadPoolSeries()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue);
        using var client = app.CreateClient();
        string[] orders = [.. Enumerable.Range(0, 3).Select(i => $"o-metrics-{i}-{Guid.NewGuid():N}")];
        foreach (string orderId in orders)
        {
            using var callback = await client.SendAsync(PayCallbackApp.SignedCallback(PayCallbackApp.Body(orderId, $"p-{Guid.NewGuid():N}")));
            Assert.Equal(HttpStatusCode.OK, callback.StatusCode);
        }

        foreach (string orderId in orders)
        {
            await app.WaitForEffectsAsync(client, orderId);
        }

        using var response = await client.GetAsync("/metrics");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/plain", response.Content.Headers.ContentType?.MediaType);
        string text = await response.Content.ReadAsStringAsync();
        // Every app in this test process reports through a meter named WorkQueue, and a meter provider listens by name,
        // so other tests' jobs may add to these series: at least ours are counted.
        Assert.True(Sample(text, "workqueue_job_enqueued_total", "payments") >= 3, text);
        Assert.True(Sample(text, "workqueue_job_enqueued_total", "legacy") >= 3, text);
        Assert.True(Sample(text, "workqueue_job_duration_seconds_count", "payments") >= 3, text);
        Assert.True(Sample(text, "workqueue_workers_current", "legacy") >= 4, text);
        Assert.Contains("# TYPE workqueue_queue_depth gauge", text);
        Assert.True(Sample(text, "dotnet_thread_pool_thread_count_total", queue: null) >= 1, text);
        Assert.Contains("\ndotnet_thread_pool_queue_length_total{", text);
        Assert.Contains("\nhttp_server_request_duration_seconds_count{", text);
    }

    [Theory]
    [InlineData(null, HttpStatusCode.Unauthorized)]
    [InlineData("wrong-key", HttpStatusCode.Forbidden)]
    [InlineData(AdminKey, HttpStatusCode.OK)]
    public async Task AdminKeyConfigured_HeaderDecides(string? key, HttpStatusCode expected)
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue, new() { ["Admin:ApiKey"] = AdminKey });
        using var client = app.CreateClient();

        using var response = await client.SendAsync(Scrape(key));

        Assert.Equal(expected, response.StatusCode);
        if (expected == HttpStatusCode.OK)
        {
            Assert.Contains("# TYPE workqueue_queue_capacity gauge", await response.Content.ReadAsStringAsync());
        }
    }

    [Fact]
    public async Task AdminKeyConfigured_NonLoopbackClientWithTheKey_IsServed()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue, new() { ["Admin:ApiKey"] = AdminKey })
        {
            ConfigureTestServices = RemoteIpOverride.Register,
        };
        using var client = app.CreateClient();
        using var withKey = Scrape(AdminKey);
        withKey.Headers.Add(RemoteIpOverride.Header, "203.0.113.7");
        using var withoutKey = Scrape(null);
        withoutKey.Headers.Add(RemoteIpOverride.Header, "203.0.113.7");

        using var served = await client.SendAsync(withKey);
        using var refused = await client.SendAsync(withoutKey);

        Assert.Equal(HttpStatusCode.OK, served.StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, refused.StatusCode);
    }

    [Fact]
    public async Task AdminKeyUnset_NonLoopbackClient_Gets403()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue) { ConfigureTestServices = RemoteIpOverride.Register };
        using var client = app.CreateClient();
        using var request = Scrape(null);
        request.Headers.Add(RemoteIpOverride.Header, "203.0.113.7");

        using var response = await client.SendAsync(request);

        Assert.Equal(HttpStatusCode.Forbidden, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        string body = await response.Content.ReadAsStringAsync();
        Assert.Contains("loopback clients only", body);
        Assert.DoesNotContain("workqueue_", body);
    }

    [Theory]
    [InlineData("X-Forwarded-For", "203.0.113.7")]
    [InlineData("Forwarded", "for=203.0.113.7;proto=https")]
    [InlineData("X-Real-IP", "203.0.113.7")]
    public async Task AdminKeyUnset_LoopbackRequestThroughAProxy_Gets403NamingTheHeader(string header, string value)
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue);
        using var client = app.CreateClient();
        using var request = Scrape(null);
        request.Headers.TryAddWithoutValidation(header, value);

        using var response = await client.SendAsync(request);

        Assert.Equal(HttpStatusCode.Forbidden, response.StatusCode);
        Assert.Contains($"'{header}'", await response.Content.ReadAsStringAsync());
    }

    private static HttpRequestMessage Scrape(string? key)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, "/metrics");
        if (key is not null)
        {
            request.Headers.Add("X-Admin-Key", key);
        }

        return request;
    }

    /// <summary>Reads one sample's value: the series <paramref name="name"/>, for a queue when one is given.</summary>
    private static double Sample(string text, string name, string? queue)
    {
        string labels = queue is null ? "[^}]*" : $"[^}}]*workqueue_queue=\"{Regex.Escape(queue)}\"[^}}]*";
        var match = Regex.Match(text, $@"^{Regex.Escape(name)}\{{{labels}\}} (\S+)", RegexOptions.Multiline);
        Assert.True(match.Success, $"No sample of {name}{(queue is null ? "" : $" for queue {queue}")} in:\n{text}");
        return double.Parse(match.Groups[1].Value, CultureInfo.InvariantCulture);
    }
}
