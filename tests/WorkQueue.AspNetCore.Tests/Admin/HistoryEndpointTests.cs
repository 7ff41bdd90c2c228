using System.Net;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Admin;

public sealed class HistoryEndpointTests
{
    [Fact]
    public async Task GetHistory_WithDashboardServices_ReturnsSamplesOfEveryQueueAndHonoursSince()
    {
        await using var app = await TestApp.StartAsync(
            b => b.Services.AddWorkQueueDashboard().AddWorkQueue(o => o.Capacity = 77).AddQueue("io"),
            web => web.MapWorkQueueAdmin());

        // The sampler takes one snapshot at start and one a second after; wait for two so "since" has one to skip.
        JsonElement root = default;
        await Wait.UntilAsync(
            () =>
            {
                root = GetJson(app, "/admin/workqueue/history");
                return root.GetProperty("queues").EnumerateArray().All(q => q.GetProperty("samples").GetArrayLength() >= 2);
            },
            "two samples of each queue");

        Assert.Equal(1000, root.GetProperty("intervalMs").GetInt32());
        var queues = root.GetProperty("queues").EnumerateArray().ToDictionary(q => q.GetProperty("name").GetString()!);
        Assert.Equal(["default", "io"], queues.Keys.Order());
        var samples = queues["default"].GetProperty("samples").EnumerateArray().ToArray();
        Assert.Equal(77, samples[0].GetProperty("capacity").GetInt32());
        foreach (string field in new[] { "t", "depth", "workers", "busy", "unfinished", "running", "jobsPerSecond", "queueWaitP50Ms", "queueWaitP99Ms" })
        {
            Assert.True(samples[0].TryGetProperty(field, out _), $"A sample should have '{field}': {samples[0]}");
        }

        long first = samples[0].GetProperty("t").GetInt64();
        var later = GetJson(app, $"/admin/workqueue/history?since={first}").GetProperty("queues")[0].GetProperty("samples");
        Assert.All(later.EnumerateArray(), s => Assert.True(s.GetProperty("t").GetInt64() > first));
        Assert.True(later.GetArrayLength() >= 1);
    }

    [Theory]
    [InlineData("yesterday")]
    [InlineData("-1")]
    [InlineData("1.5")]
    public async Task GetHistory_BadSince_Returns400NamingSince(string since)
    {
        await using var app = await TestApp.StartAsync(b => b.Services.AddWorkQueueDashboard().AddWorkQueue(), web => web.MapWorkQueueAdmin());

        using var response = await app.Client.GetAsync($"/admin/workqueue/history?since={since}");

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.True(json.RootElement.GetProperty("errors").TryGetProperty("since", out _));
    }

    [Fact]
    public async Task GetHistory_WithoutDashboardServices_Returns404NamingAddWorkQueueDashboard()
    {
        await using var app = await TestApp.StartAsync(b => b.Services.AddWorkQueue(), web => web.MapWorkQueueAdmin());

        using var response = await app.Client.GetAsync("/admin/workqueue/history");

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Contains("AddWorkQueueDashboard", await response.Content.ReadAsStringAsync());
    }

    private static JsonElement GetJson(TestApp app, string path)
    {
        using var response = app.Client.GetAsync(path).GetAwaiter().GetResult();
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using var json = JsonDocument.Parse(response.Content.ReadAsStringAsync().GetAwaiter().GetResult());
        return json.RootElement.Clone();
    }
}
