using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Admin;

public sealed class LoopbackOnlyFilterTests : IAsyncLifetime
{
    private TestApp _app = null!;

    public async ValueTask InitializeAsync() =>
        _app = await TestApp.StartAsync(
            b => b.Services.AddWorkQueue(),
            app =>
            {
                app.MapWorkQueueAdmin("/admin/workqueue");
                app.MapWorkQueueAdmin("/open/workqueue").AllowAnonymous();
            });

    public async ValueTask DisposeAsync() => await _app.DisposeAsync();

    [Theory]
    [InlineData("X-Forwarded-For", "203.0.113.7")]
    [InlineData("Forwarded", "for=203.0.113.7;proto=https")]
    [InlineData("X-Forwarded-Host", "admin.example.com")]
    [InlineData("X-Forwarded-Proto", "https")]
    [InlineData("X-Real-IP", "203.0.113.7")]
    [InlineData("X-Original-For", "203.0.113.7:5000")]
    public async Task LoopbackDefault_RequestWithForwardingHeader_Gets403NamingTheHeader(string header, string value)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, "/admin/workqueue/default/depth");
        request.Headers.TryAddWithoutValidation(header, value);

        using var response = await _app.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.Forbidden, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        string body = await response.Content.ReadAsStringAsync();
        Assert.Contains($"'{header}'", body);
        Assert.Contains("RequireAuthorization", body);
    }

    [Fact]
    public async Task LoopbackDefault_ForwardedStateChange_IsRefusedBeforeItActs()
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, "/admin/workqueue/default/pause")
        {
            Content = new StringContent("{}", System.Text.Encoding.UTF8, "application/json"),
        };
        request.Headers.Add("X-Forwarded-For", "203.0.113.7");

        using var response = await _app.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.Forbidden, response.StatusCode);
        Assert.False(_app.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single(q => q.Name == "default").GetSnapshot().IsPaused);
    }

    [Fact]
    public async Task LoopbackDefault_DirectLoopbackRequest_IsServed()
    {
        using var response = await _app.Client.GetAsync("/admin/workqueue/default/depth");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    [Fact]
    public async Task ExplicitAuthorizationMetadata_ForwardedRequest_IsLeftToAuthorization()
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, "/open/workqueue/default/depth");
        request.Headers.Add("X-Forwarded-For", "203.0.113.7");

        using var response = await _app.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }
}
