using System.Net;
using System.Net.Http.Json;
using System.Text;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Admin;

public sealed class JsonOnlyFilterTests : IAsyncLifetime
{
    private TestApp _app = null!;

    private IWorkQueueControl Default => _app.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single(q => q.Name == "default");

    public async ValueTask InitializeAsync() =>
        _app = await TestApp.StartAsync(b => b.Services.AddWorkQueue(o => o.MaxWorkers = 8), app => app.MapWorkQueueAdmin());

    public async ValueTask DisposeAsync() => await _app.DisposeAsync();

    // What a cross-site HTML form (or a no-cors fetch) can send without a CORS preflight.
    [Theory]
    [InlineData("application/x-www-form-urlencoded", "a=1")]
    [InlineData("multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--x--\r\n")]
    [InlineData("text/plain", "{}")]
    [InlineData(null, null)]
    public async Task Pause_SimpleCrossSiteRequest_Gets415AndDoesNotPause(string? contentType, string? body)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, "/admin/workqueue/default/pause") { Content = Content(contentType, body) };

        using var response = await _app.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.UnsupportedMediaType, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.Contains("application/json", await response.Content.ReadAsStringAsync());
        Assert.False(Default.GetSnapshot().IsPaused);
    }

    [Fact]
    public async Task Resume_FormPost_Gets415AndLeavesThePausedQueuePaused()
    {
        Default.Pause();

        using var response = await _app.Client.PostAsync("/admin/workqueue/default/resume", new FormUrlEncodedContent([]));

        Assert.Equal(HttpStatusCode.UnsupportedMediaType, response.StatusCode);
        Assert.True(Default.GetSnapshot().IsPaused);
        Default.Resume();
    }

    [Fact]
    public async Task PutWorkers_JsonBodyAsTextPlain_Gets415AndKeepsTheCount()
    {
        using var response = await _app.Client.PutAsync("/admin/workqueue/default/workers", new StringContent("""{"count":5}""", Encoding.UTF8, "text/plain"));

        Assert.Equal(HttpStatusCode.UnsupportedMediaType, response.StatusCode);
        Assert.Equal(WorkerMode.Auto, Default.GetSnapshot().Mode);
    }

    [Fact]
    public async Task Pause_JsonContentTypeWithEmptyBody_Pauses()
    {
        using var response = await _app.Client.PostAsync("/admin/workqueue/default/pause", new StringContent("", Encoding.UTF8, "application/json"));

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.True(Default.GetSnapshot().IsPaused);
        using var resumed = await _app.Client.PostAsync("/admin/workqueue/default/resume", JsonContent.Create(new { }));
        Assert.Equal(HttpStatusCode.OK, resumed.StatusCode);
        Assert.False(Default.GetSnapshot().IsPaused);
    }

    private static HttpContent? Content(string? contentType, string? body)
    {
        if (contentType is null)
        {
            return null;
        }

        var content = new StringContent(body ?? "");
        content.Headers.ContentType = System.Net.Http.Headers.MediaTypeHeaderValue.Parse(contentType);
        return content;
    }
}
