using System.Net;
using System.Net.Http.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Admin;

/// <summary>
/// The admin endpoints' default protection against a page on another site: DNS rebinding (a loopback request that names
/// another host) and an app-wide CORS default policy (a preflight these endpoints must never approve).
/// </summary>
public sealed class LoopbackOnlyFilterHostTests : IAsyncLifetime
{
    private const string Prefix = "/admin/workqueue";
    private TestApp _app = null!;

    public async ValueTask InitializeAsync() =>
        _app = await TestApp.StartAsync(
            b =>
            {
                b.Services.AddWorkQueue();
                b.Services.AddCors(o => o.AddDefaultPolicy(p => p.AllowAnyOrigin().AllowAnyHeader().AllowAnyMethod()));
            },
            app =>
            {
                app.UseCors();
                app.MapWorkQueueAdmin(Prefix);
                app.MapPost("/api/open", () => "open to CORS");
            });

    public async ValueTask DisposeAsync() => await _app.DisposeAsync();

    [Theory]
    [InlineData("rebind.attacker.example")]
    [InlineData("rebind.attacker.example:5080")]
    [InlineData("localhost.attacker.example")]
    [InlineData("127.0.0.1.nip.io")]
    [InlineData("2130706433")]
    [InlineData("127.1")]
    public async Task Get_HostNotALoopbackName_Answers403SayingWhy(string host)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, Prefix);
        request.Headers.Host = host;
        using var response = await _app.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.Forbidden, response.StatusCode);
        string body = await response.Content.ReadAsStringAsync();
        Assert.Contains("DNS rebinding", body, StringComparison.Ordinal);
        Assert.Contains("localhost, 127.0.0.0/8 or [::1]", body, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("localhost")]
    [InlineData("LOCALHOST:5080")]
    [InlineData("127.0.0.1:80")]
    [InlineData("127.1.2.3")]
    [InlineData("[::1]:5080")]
    public async Task Get_LoopbackHostName_Answers200(string host)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, Prefix);
        request.Headers.Host = host;
        using var response = await _app.Client.SendAsync(request);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    [Fact]
    public async Task Pause_FromARebindingPage_IsRefusedAndTheQueueRuns()
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, $"{Prefix}/default/pause") { Content = JsonContent.Create(new { }) };
        request.Headers.Host = "rebind.attacker.example";
        using var response = await _app.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.Forbidden, response.StatusCode);
        var control = _app.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single();
        Assert.False(control.GetSnapshot().IsPaused);
    }

    [Fact]
    public async Task CrossSitePage_AppHasADefaultCorsPolicy_ItsCallsAreRefusedAndChangeNothing()
    {
        // The app's policy is live: it approves the preflight, here as for any endpoint (so the checks below can fail).
        using var preflight = await SendPreflightAsync($"{Prefix}/default/pause");
        Assert.True(preflight.Headers.Contains("Access-Control-Allow-Origin"), "the app's default policy approves the preflight");

        using var pause = new HttpRequestMessage(HttpMethod.Post, $"{Prefix}/default/pause") { Content = JsonContent.Create(new { }) };
        pause.Headers.Add("Origin", "http://evil.example");
        using var paused = await _app.Client.SendAsync(pause);
        Assert.Equal(HttpStatusCode.Forbidden, paused.StatusCode);
        Assert.Contains("http://evil.example", await paused.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        Assert.False(_app.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single().GetSnapshot().IsPaused);

        // A cross-site read gets no data either, though the policy would let the page read the answer.
        using var read = new HttpRequestMessage(HttpMethod.Get, Prefix);
        read.Headers.Add("Origin", "null");
        using var state = await _app.Client.SendAsync(read);
        Assert.Equal(HttpStatusCode.Forbidden, state.StatusCode);
        Assert.DoesNotContain("\"totals\"", await state.Content.ReadAsStringAsync(), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("http://localhost:5080")]
    [InlineData("http://127.0.0.1:3000")]
    [InlineData("https://[::1]")]
    public async Task LoopbackPage_ItsCallsAreServed(string origin)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, $"{Prefix}/default/resume") { Content = JsonContent.Create(new { }) };
        request.Headers.Add("Origin", origin);
        using var response = await _app.Client.SendAsync(request);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    private async Task<HttpResponseMessage> SendPreflightAsync(string path)
    {
        var request = new HttpRequestMessage(HttpMethod.Options, path);
        request.Headers.Add("Origin", "http://evil.example");
        request.Headers.Add("Access-Control-Request-Method", "POST");
        request.Headers.Add("Access-Control-Request-Headers", "content-type");
        return await _app.Client.SendAsync(request);
    }
}

/// <summary>With authorization handed to a policy (here: explicitly anonymous), the Host check is the app's to make.</summary>
public sealed class LoopbackOnlyFilterHostSecuredTests
{
    [Fact]
    public async Task Get_AllowAnonymous_AnyHostAnswers()
    {
        await using var app = await TestApp.StartAsync(
            b => b.Services.AddWorkQueue().Services.AddAuthorization(),
            a =>
            {
                a.UseAuthorization();
                a.MapWorkQueueAdmin("/admin/workqueue").AllowAnonymous();
            });
        using var request = new HttpRequestMessage(HttpMethod.Get, "/admin/workqueue");
        request.Headers.Host = "payments.example.com";
        using var response = await app.Client.SendAsync(request);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }
}
