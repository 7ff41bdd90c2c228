using System.Net;
using System.Text.Json;
using WorkQueue.Packaging.Tests.TestSupport;

namespace WorkQueue.Packaging.Tests;

/// <summary>
/// A separate web app restores the packages by version from the temporary feed only, builds, starts, enqueues jobs
/// and reads the admin depth endpoint: the packages restore and work on their own.
/// </summary>
[Collection(PackagesCollection.Name)]
public sealed class ConsumerAppTests
{
    private static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(30);

    private readonly PackagedFeed _feed;

    public ConsumerAppTests(PackagedFeed feed)
    {
        _feed = feed;
    }

    [Fact]
    public async Task ConsumerApp_ReferencingPackagesFromFeed_EnqueuesJobsAndReportsDepth()
    {
        using var app = new ConsumerApp(_feed);
        (await app.BuildAsync()).EnsureSucceeded("Building the consumer app from the packages");

        // Restored into the app's own, previously empty, package folder: from the feed, at the packed version. (The app
        // references WorkQueue.AspNetCore, which brings WorkQueue.Core; WorkQueue.Testing is for test projects.)
        foreach (var id in new[] { "WorkQueue.AspNetCore", "WorkQueue.Core" })
        {
            string restored = Path.Combine(app.PackagesDirectory, id.ToLowerInvariant(), _feed.Version.ToLowerInvariant());
            Assert.True(Directory.Exists(restored), $"{id} {_feed.Version} was not restored into {app.PackagesDirectory}.");
        }

        var address = await app.StartAsync();
        using var http = new HttpClient { BaseAddress = address, Timeout = RequestTimeout };

        // Paused, the queue keeps what is enqueued, so the depth is exact.
        var paused = await SendAsync(app, http, HttpMethod.Post, "/admin/workqueue/default/pause", HttpStatusCode.OK);
        Assert.True(paused.GetProperty("paused").GetBoolean(), $"Pausing answered {paused}.");
        foreach (var id in new[] { "a", "b", "c" })
        {
            await SendAsync(app, http, HttpMethod.Post, $"/jobs/{id}", HttpStatusCode.Accepted);
        }

        var depth = await SendAsync(app, http, HttpMethod.Get, "/admin/workqueue/default/depth", HttpStatusCode.OK);
        Assert.Equal("default", depth.GetProperty("queue").GetString());
        Assert.Equal(3, depth.GetProperty("depth").GetInt32());
        Assert.Equal(int.Parse(ConsumerAppSource.Capacity), depth.GetProperty("capacity").GetInt32());

        var smsDepth = await SendAsync(app, http, HttpMethod.Get, "/admin/workqueue/sms/depth", HttpStatusCode.OK);
        Assert.Equal(0, smsDepth.GetProperty("depth").GetInt32());
        Assert.Equal(int.Parse(ConsumerAppSource.SmsCapacity), smsDepth.GetProperty("capacity").GetInt32());

        // Resumed, the scoped handlers run the three jobs.
        await SendAsync(app, http, HttpMethod.Post, "/admin/workqueue/default/resume", HttpStatusCode.OK);
        var deadline = DateTime.UtcNow + Wait.Generous;
        string[] done = [];
        while (done.Length < 3)
        {
            Assert.True(DateTime.UtcNow < deadline, $"Timed out after {Wait.Generous.TotalSeconds} s waiting for the jobs to run; done: [{string.Join(", ", done)}]. App output:{Environment.NewLine}{app.Output}");
            await Task.Delay(50);
            var body = await SendAsync(app, http, HttpMethod.Get, "/jobs/done", HttpStatusCode.OK);
            done = body.EnumerateArray().Select(e => e.GetString()!).ToArray();
        }

        Assert.Equal(["a", "b", "c"], done.Order());
        var drained = await SendAsync(app, http, HttpMethod.Get, "/admin/workqueue/default/depth", HttpStatusCode.OK);
        Assert.Equal(0, drained.GetProperty("depth").GetInt32());

        // The Redis warm-up (no Redis here) holds readiness down: the StackExchange.Redis dependency loaded and ran.
        using var ready = await http.GetAsync("/health/ready");
        Assert.True(ready.StatusCode == HttpStatusCode.ServiceUnavailable, $"GET /health/ready answered {(int)ready.StatusCode}: {await ready.Content.ReadAsStringAsync()}. App output:{Environment.NewLine}{app.Output}");
    }

    private static async Task<JsonElement> SendAsync(ConsumerApp app, HttpClient http, HttpMethod method, string path, HttpStatusCode expected)
    {
        string body;
        HttpStatusCode status;
        try
        {
            using var request = new HttpRequestMessage(method, path);
            if (method != HttpMethod.Get)
            {
                // State-changing admin calls need a JSON content type.
                request.Content = new StringContent("{}", System.Text.Encoding.UTF8, "application/json");
            }

            using var response = await http.SendAsync(request);
            status = response.StatusCode;
            body = await response.Content.ReadAsStringAsync();
        }
        catch (Exception ex) when (ex is HttpRequestException or TaskCanceledException)
        {
            Assert.Fail($"{method} {path} failed: {ex.Message}. App output:{Environment.NewLine}{app.Output}");
            throw;
        }

        Assert.True(status == expected, $"{method} {path} answered {(int)status} instead of {(int)expected}: {body}. App output:{Environment.NewLine}{app.Output}");
        if (string.IsNullOrEmpty(body))
        {
            return default;
        }

        using var json = JsonDocument.Parse(body);
        return json.RootElement.Clone();
    }
}
