using System.Collections.Concurrent;
using System.Net;
using System.Text;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.AspNetCore.Routing.Patterns;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Admin;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Admin;

public sealed class LoopbackOnlyFilterTests : IAsyncLifetime
{
    /// <summary>A request with this header has its body watched: the header's value is recorded once anything reads it.</summary>
    private const string BodyProbeHeader = "X-Test-Body-Probe";

    private readonly ConcurrentDictionary<string, bool> _bodiesRead = new();
    private TestApp _app = null!;

    public async ValueTask InitializeAsync() =>
        _app = await TestApp.StartAsync(
            b => b.Services.AddWorkQueue(),
            app =>
            {
                app.Use((context, next) =>
                {
                    if (context.Request.Headers.TryGetValue(BodyProbeHeader, out var probe))
                    {
                        context.Request.Body = new ReadProbeStream(context.Request.Body, () => _bodiesRead[probe.ToString()] = true);
                    }

                    return next(context);
                });
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

    [Theory]
    [InlineData("default", "requeue", "text/plain", """{"ids":["1-0"]}""")]
    [InlineData("default", "requeue", "application/json", "{not json")]
    [InlineData("nope", "requeue", "text/plain", """{"ids":["1-0"]}""")]
    [InlineData("nope", "requeue", "application/json", "{not json")]
    [InlineData("default", "delete", "text/plain", """{"ids":["1-0"]}""")]
    [InlineData("default", "delete", "application/json", "{not json")]
    [InlineData("nope", "delete", "text/plain", """{"ids":["1-0"]}""")]
    [InlineData("nope", "delete", "application/json", "{not json")]
    public async Task LoopbackDefault_BulkDeadLettersFromNonLoopbackClient_403BeforeTheBodyIsRead(string queue, string action, string contentType, string body)
    {
        using var response = await SendProbedAsync(HttpMethod.Post, $"/admin/workqueue/{queue}/dead-letters/{action}", contentType, body, "bulk");

        Assert.Equal(HttpStatusCode.Forbidden, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.Contains("loopback clients only", await response.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        Assert.False(_bodiesRead.ContainsKey("bulk"), "The body was read before the request was refused.");
    }

    [Fact]
    public async Task LoopbackDefault_EveryRouteFromNonLoopbackClient_403BeforeTheBodyIsRead()
    {
        var routes = ((IEndpointRouteBuilder)_app.App).DataSources
            .SelectMany(source => source.Endpoints)
            .OfType<RouteEndpoint>()
            .Where(endpoint => endpoint.Metadata.GetMetadata<AdminEndpointMetadata>()?.Prefix == "/admin/workqueue")
            .Select(endpoint => (Method: endpoint.Metadata.GetMetadata<HttpMethodMetadata>()!.HttpMethods.Single(), Path: PathOf(endpoint.RoutePattern)))
            .ToArray();
        Assert.True(routes.Length >= 24, $"Only {routes.Length} admin routes were found.");

        foreach (var (method, path) in routes)
        {
            // A body no route could bind or parse: refused for who sent it, not for what it sent.
            using var response = await SendProbedAsync(new HttpMethod(method), path, "text/plain", "{not json", path);

            Assert.True(response.StatusCode == HttpStatusCode.Forbidden, $"{method} {path} answered {(int)response.StatusCode}.");
            Assert.False(_bodiesRead.ContainsKey(path), $"{method} {path} read the body before it refused the request.");
        }
    }

    [Fact]
    public async Task LoopbackDefault_PutWorkersFromLoopbackClient_TheProbeSeesTheBodyRead()
    {
        // The probe behind the two tests above: a loopback client's invalid JSON is read, and refused for what it is.
        using var request = new HttpRequestMessage(HttpMethod.Put, "/admin/workqueue/default/workers") { Content = new StringContent("{not json", Encoding.UTF8, "application/json") };
        request.Headers.Add(BodyProbeHeader, "loopback");

        using var response = await _app.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        Assert.True(_bodiesRead.ContainsKey("loopback"));
    }

    private async Task<HttpResponseMessage> SendProbedAsync(HttpMethod method, string path, string contentType, string body, string probe)
    {
        using var request = new HttpRequestMessage(method, path) { Content = new StringContent(body, Encoding.UTF8, contentType) };
        request.Headers.Add(TestApp.RemoteIpHeader, "203.0.113.7");
        request.Headers.Add(BodyProbeHeader, probe);
        return await _app.Client.SendAsync(request);
    }

    /// <summary>A concrete path for a route: <c>default</c> for a queue, <c>1-0</c> for an id.</summary>
    private static string PathOf(RoutePattern pattern) =>
        "/" + string.Join('/', pattern.PathSegments.Select(segment => string.Concat(segment.Parts.Select(part => part switch
        {
            RoutePatternLiteralPart literal => literal.Content,
            RoutePatternParameterPart { Name: "queue" } => "default",
            RoutePatternParameterPart => "1-0",
            _ => throw new InvalidOperationException($"Unexpected route part in '{pattern.RawText}'."),
        }))));

    /// <summary>Passes reads through to the request body, and says when the first one happens.</summary>
    private sealed class ReadProbeStream(Stream inner, Action read) : Stream
    {
        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => throw new NotSupportedException();

        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override int Read(byte[] buffer, int offset, int count)
        {
            read();
            return inner.Read(buffer, offset, count);
        }

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            read();
            return inner.ReadAsync(buffer, cancellationToken);
        }

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}
