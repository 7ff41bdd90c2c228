using System.Net;
using System.Net.Http.Json;
using System.Security.Claims;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Admin;

public sealed class WorkQueueAdminEndpointsTests : IAsyncLifetime
{
    private const string Prefix = "/admin/workqueue";
    private TestApp _app = null!;

    private HttpClient Client => _app.Client;

    private IWorkQueueControl Default => Control("default");

    private IWorkQueueControl Control(string name) =>
        _app.Services.GetRequiredService<IWorkQueueProvider>().TryGetControl(name, out var control) ? control : throw new InvalidOperationException(name);

    public async ValueTask InitializeAsync() =>
        _app = await TestApp.StartAsync(
            b => b.Services.AddWorkQueue(o => { o.MaxWorkers = 8; o.Capacity = 100; }).AddQueue("io", o => o.MaxWorkers = 2),
            app => app.MapWorkQueueAdmin(Prefix));

    public async ValueTask DisposeAsync() => await _app.DisposeAsync();

    [Fact]
    public async Task GetAll_ReturnsEveryQueueSnapshotInCamelCase()
    {
        using var response = await Client.GetAsync(Prefix);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        var names = json.RootElement.EnumerateArray().Select(q => q.GetProperty("name").GetString()!).Order().ToArray();
        Assert.Equal(["default", "io"], names);
        var first = json.RootElement[0];
        Assert.True(first.TryGetProperty("totals", out var totals) && totals.TryGetProperty("enqueued", out _));
        Assert.True(first.GetProperty("workers").TryGetProperty("mode", out _));
        Assert.True(first.TryGetProperty("queueWaitMs", out _));
    }

    [Fact]
    public async Task GetOne_KnownQueue_ReturnsItsSnapshot()
    {
        using var json = await GetJsonAsync($"{Prefix}/io");

        Assert.Equal("io", json.RootElement.GetProperty("name").GetString());
        Assert.Equal(2, json.RootElement.GetProperty("workers").GetProperty("max").GetInt32());
        Assert.Equal("wait", json.RootElement.GetProperty("fullMode").GetString());
    }

    [Fact]
    public async Task GetDepth_PausedQueueWithJobs_ReportsDepthAndCapacity()
    {
        Default.Pause();
        for (int i = 0; i < 3; i++)
        {
            Assert.True(_app.Services.GetRequiredService<IInMemoryWorkQueue>().TryEnqueue(_ => { }));
        }

        using var json = await GetJsonAsync($"{Prefix}/default/depth");
        Default.Resume();

        Assert.Equal("""{"queue":"default","depth":3,"capacity":100}""", json.RootElement.GetRawText());
    }

    [Fact]
    public async Task GetWorkers_ReturnsCountsAndMode()
    {
        using var json = await GetJsonAsync($"{Prefix}/default/workers");

        var root = json.RootElement;
        Assert.Equal("default", root.GetProperty("queue").GetString());
        Assert.Equal(1, root.GetProperty("current").GetInt32());
        Assert.Equal(0, root.GetProperty("busy").GetInt32());
        Assert.Equal(1, root.GetProperty("min").GetInt32());
        Assert.Equal(8, root.GetProperty("max").GetInt32());
        Assert.Equal("auto", root.GetProperty("mode").GetString());
    }

    [Fact]
    public async Task PutWorkers_CountThenAuto_SetsManualCountThenHandsBack()
    {
        using var manual = await Client.PutAsJsonAsync($"{Prefix}/default/workers", new { count = 3 });
        Assert.Equal(HttpStatusCode.OK, manual.StatusCode);
        using (var json = JsonDocument.Parse(await manual.Content.ReadAsStringAsync()))
        {
            Assert.Equal(3, json.RootElement.GetProperty("current").GetInt32());
            Assert.Equal("manual", json.RootElement.GetProperty("mode").GetString());
        }

        Assert.Equal((3, WorkerMode.Manual), (Default.GetSnapshot().Workers, Default.GetSnapshot().Mode));

        using var auto = await Client.PutAsJsonAsync($"{Prefix}/default/workers", new { mode = "auto" });
        Assert.Equal(HttpStatusCode.OK, auto.StatusCode);
        using var autoJson = JsonDocument.Parse(await auto.Content.ReadAsStringAsync());
        Assert.Equal("auto", autoJson.RootElement.GetProperty("mode").GetString());
        Assert.Equal(WorkerMode.Auto, Default.GetSnapshot().Mode);
    }

    [Theory]
    [InlineData("""{"count":0}""", "count")]
    [InlineData("""{"count":9}""", "count")]
    [InlineData("""{"count":-1}""", "count")]
    [InlineData("""{"count":"three"}""", "count")]
    [InlineData("""{"count":1.5}""", "count")]
    [InlineData("""{"count":3,"mode":"auto"}""", "count")]
    [InlineData("""{"mode":"manual"}""", "count")]
    [InlineData("""{"mode":"sideways"}""", "mode")]
    [InlineData("""{}""", "body")]
    [InlineData("""[3]""", "body")]
    [InlineData("""{"count":""", "body")]
    [InlineData("", "body")]
    public async Task PutWorkers_BadInput_Returns400ProblemNamingTheField(string body, string field)
    {
        using var content = new StringContent(body, Encoding.UTF8, "application/json");
        using var response = await Client.PutAsync($"{Prefix}/default/workers", content);

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.Equal(400, json.RootElement.GetProperty("status").GetInt32());
        var errors = json.RootElement.GetProperty("errors");
        Assert.True(errors.TryGetProperty(field, out var messages), $"errors should name '{field}': {errors}");
        Assert.NotEmpty(messages.EnumerateArray());
        Assert.Equal(WorkerMode.Auto, Default.GetSnapshot().Mode);
    }

    [Theory]
    [InlineData("GET", "/nope")]
    [InlineData("GET", "/nope/depth")]
    [InlineData("GET", "/nope/workers")]
    [InlineData("PUT", "/nope/workers")]
    [InlineData("POST", "/nope/pause")]
    [InlineData("POST", "/nope/resume")]
    public async Task UnknownQueue_Returns404Problem(string method, string path)
    {
        using var request = new HttpRequestMessage(new HttpMethod(method), Prefix + path)
        {
            Content = method == "GET" ? null : new StringContent("""{"count":1}""", Encoding.UTF8, "application/json"),
        };
        using var response = await Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.Contains("'nope'", await response.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task PauseThenResume_StopsAndRestartsJobStarts()
    {
        using var paused = await Client.PostAsync($"{Prefix}/io/pause", JsonContent.Create(new { }));
        Assert.Equal(HttpStatusCode.OK, paused.StatusCode);
        var io = _app.Services.GetRequiredKeyedService<IInMemoryWorkQueue>("io");
        Assert.True(Control("io").GetSnapshot().IsPaused);
        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(io.TryEnqueue(_ => ran.SetResult()));

        using var resumed = await Client.PostAsync($"{Prefix}/io/resume", JsonContent.Create(new { }));

        Assert.Equal(HttpStatusCode.OK, resumed.StatusCode);
        Assert.Equal("""{"queue":"io","paused":false}""", await resumed.Content.ReadAsStringAsync());
        await Wait.ForAsync(ran.Task, "the job queued while paused");
    }

    [Fact]
    public async Task NoAuthorization_NonLoopbackClient_Gets403()
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, Prefix);
        request.Headers.Add(TestApp.RemoteIpHeader, "203.0.113.7");

        using var response = await Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.Forbidden, response.StatusCode);
        Assert.Contains("loopback", await response.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task NoAuthorization_LoopbackClient_IsServed()
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, Prefix);
        request.Headers.Add(TestApp.RemoteIpHeader, "::1");

        using var response = await Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    [Fact]
    public async Task MapWorkQueueAdmin_WithoutAddWorkQueue_ThrowsNamingAddWorkQueue()
    {
        var ex = Assert.Throws<InvalidOperationException>(() => TestApp.Build(_ => { }, app => app.MapWorkQueueAdmin()));

        Assert.Contains("AddWorkQueue", ex.Message);
        await Task.CompletedTask;
    }

    private async Task<JsonDocument> GetJsonAsync(string path)
    {
        using var response = await Client.GetAsync(path);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return JsonDocument.Parse(await response.Content.ReadAsStringAsync());
    }
}

public sealed class WorkQueueAdminAuthorizationTests : IAsyncLifetime
{
    private TestApp _app = null!;

    public async ValueTask InitializeAsync() =>
        _app = await TestApp.StartAsync(
            b =>
            {
                b.Services.AddWorkQueue();
                b.Services.AddAuthentication(HeaderUserHandler.SchemeName).AddScheme<AuthenticationSchemeOptions, HeaderUserHandler>(HeaderUserHandler.SchemeName, null);
                b.Services.AddAuthorization(o => o.AddPolicy("admin", p => p.RequireClaim("role", "admin")));
            },
            app =>
            {
                app.UseAuthentication();
                app.UseAuthorization();
                app.MapWorkQueueAdmin().RequireAuthorization("admin");
            });

    public async ValueTask DisposeAsync() => await _app.DisposeAsync();

    [Theory]
    [InlineData(null, HttpStatusCode.Unauthorized)]
    [InlineData("guest", HttpStatusCode.Forbidden)]
    [InlineData("admin", HttpStatusCode.OK)]
    public async Task RequireAuthorization_NonLoopbackClient_PolicyDecides(string? role, HttpStatusCode expected)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, "/admin/workqueue/default/depth");
        request.Headers.Add(TestApp.RemoteIpHeader, "203.0.113.7");
        if (role is not null)
        {
            request.Headers.Add(HeaderUserHandler.Header, role);
        }

        using var response = await _app.Client.SendAsync(request);

        Assert.Equal(expected, response.StatusCode);
    }

    private sealed class HeaderUserHandler(IOptionsMonitor<AuthenticationSchemeOptions> options, ILoggerFactory logger, UrlEncoder encoder)
        : AuthenticationHandler<AuthenticationSchemeOptions>(options, logger, encoder)
    {
        public const string SchemeName = "TestHeader";
        public const string Header = "X-Test-Role";

        protected override Task<AuthenticateResult> HandleAuthenticateAsync()
        {
            if (!Request.Headers.TryGetValue(Header, out var role))
            {
                return Task.FromResult(AuthenticateResult.NoResult());
            }

            var identity = new ClaimsIdentity([new Claim("role", role.ToString())], SchemeName);
            return Task.FromResult(AuthenticateResult.Success(new AuthenticationTicket(new ClaimsPrincipal(identity), SchemeName)));
        }
    }
}
