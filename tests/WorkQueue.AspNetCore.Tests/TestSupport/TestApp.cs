using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace WorkQueue.AspNetCore.Tests.TestSupport;

/// <summary>A real Kestrel app on 127.0.0.1 with a free port.</summary>
internal sealed class TestApp : IAsyncDisposable
{
    /// <summary>
    /// Requests with this header pretend to come from that address, so the loopback-only default can be tested against
    /// a non-loopback client without sending traffic anywhere but loopback.
    /// </summary>
    public const string RemoteIpHeader = "X-Test-Remote-Ip";

    private TestApp(WebApplication app)
    {
        App = app;
    }

    public WebApplication App { get; }

    public HttpClient Client { get; private set; } = null!;

    public IServiceProvider Services => App.Services;

    public static WebApplication Build(Action<WebApplicationBuilder> configureServices, Action<WebApplication> configureApp, int port = 0)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls($"http://127.0.0.1:{port}");
        builder.Logging.SetMinimumLevel(LogLevel.Warning);
        configureServices(builder);
        var app = builder.Build();
        app.Use((context, next) =>
        {
            if (context.Request.Headers.TryGetValue(RemoteIpHeader, out var ip))
            {
                context.Connection.RemoteIpAddress = IPAddress.Parse(ip.ToString());
            }

            return next(context);
        });
        configureApp(app);
        return app;
    }

    public static async Task<TestApp> StartAsync(Action<WebApplicationBuilder> configureServices, Action<WebApplication> configureApp, int port = 0)
    {
        var testApp = new TestApp(Build(configureServices, configureApp, port));
        await testApp.App.StartAsync();
        var address = testApp.App.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Single();
        testApp.Client = new HttpClient { BaseAddress = new Uri(address), Timeout = TimeSpan.FromSeconds(30) };
        return testApp;
    }

    public async ValueTask DisposeAsync()
    {
        Client?.Dispose();
        await App.StopAsync();
        await App.DisposeAsync();
    }
}
