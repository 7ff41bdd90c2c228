using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.HttpOverrides;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Admin;

public sealed class AdminExposureCheckTests
{
    private const int ForwardedHeadersWithoutPolicy = 401;

    public static TheoryData<string> ForwardedHeadersSetups => ["UseForwardedHeaders", "ConfigureOptions", "EnvironmentSetting"];

    [Theory]
    [MemberData(nameof(ForwardedHeadersSetups))]
    public async Task Startup_ForwardedHeadersOnWithoutPolicy_LogsWarningNamingThePrefix(string setup)
    {
        var log = new LogCapture();

        await using (await StartAsync(log, setup, requirePolicy: false))
        {
            var warning = Assert.Single(log.Entries, e => e.EventId.Id == ForwardedHeadersWithoutPolicy);
            Assert.Equal(LogLevel.Warning, warning.Level);
            Assert.Contains("/admin/workqueue", warning.Message);
            Assert.Contains("only an authorization policy", warning.Message);
        }
    }

    [Theory]
    [MemberData(nameof(ForwardedHeadersSetups))]
    public async Task Startup_ForwardedHeadersOnWithPolicy_LogsNoWarning(string setup)
    {
        var log = new LogCapture();

        await using (await StartAsync(log, setup, requirePolicy: true))
        {
            Assert.DoesNotContain(log.Entries, e => e.EventId.Id == ForwardedHeadersWithoutPolicy);
            Assert.Contains(log.Entries, e => e.EventId.Id == 400);
        }
    }

    [Fact]
    public async Task Startup_FullWebApplicationBuilderWithoutForwardedHeaders_LogsNoWarning()
    {
        // CreateBuilder registers the host's own ForwardedHeadersOptions setup; that alone is not "handling on".
        var log = new LogCapture();
        var builder = WebApplication.CreateBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Logging.ClearProviders().AddProvider(log);
        builder.Services.AddWorkQueue();
        await using var app = builder.Build();
        app.MapWorkQueueAdmin();

        await app.StartAsync();
        await app.StopAsync();

        Assert.Contains(log.Entries, e => e.EventId.Id == 400);
        Assert.DoesNotContain(log.Entries, e => e.EventId.Id == ForwardedHeadersWithoutPolicy);
    }

    private static Task<TestApp> StartAsync(LogCapture log, string setup, bool requirePolicy) =>
        TestApp.StartAsync(
            b =>
            {
                b.Logging.AddProvider(log).AddFilter<LogCapture>(null, LogLevel.Information);
                b.Services.AddWorkQueue();
                b.Services.AddAuthorization(o => o.AddPolicy("admin", p => p.RequireAssertion(_ => true)));
                if (setup == "ConfigureOptions")
                {
                    b.Services.Configure<ForwardedHeadersOptions>(o => o.ForwardedHeaders = ForwardedHeaders.XForwardedFor);
                }
                else if (setup == "EnvironmentSetting")
                {
                    // What ASPNETCORE_FORWARDEDHEADERS_ENABLED=true becomes in the host's configuration.
                    b.Configuration["FORWARDEDHEADERS_ENABLED"] = "true";
                }
            },
            app =>
            {
                if (setup == "UseForwardedHeaders")
                {
                    app.UseForwardedHeaders();
                }

                var admin = app.MapWorkQueueAdmin("/admin/workqueue");
                if (requirePolicy)
                {
                    admin.RequireAuthorization("admin");
                }
            });
}
