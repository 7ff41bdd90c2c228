using System.Net;
using System.Security.Claims;
using System.Text.Encodings.Web;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkQueue.AspNetCore;

namespace WorkQueue.Dashboard.Tests.TestSupport;

/// <summary>
/// A real Kestrel app on 127.0.0.1 (free port) with three in-memory queues, the admin endpoints and the dashboard, as an
/// application would map them; given a redis-server, a fourth, durable queue (<see cref="DurableQueue"/>) on it.
/// </summary>
internal sealed class DashboardHost : IAsyncDisposable
{
    public const string HostileQueue = "<script>window.pwned = 1</script>";
    public const string AdminKey = "the-admin-key";
    public const string KeyHeader = "X-Admin-Key";
    public const string DurableQueue = "payments";

    private DashboardHost(WebApplication app, Uri address)
    {
        App = app;
        Address = address;
        Client = new HttpClient { BaseAddress = address, Timeout = TimeSpan.FromSeconds(30) };
        if (app.Services.GetService<KeyCheck>() is not null)
        {
            Client.DefaultRequestHeaders.Add(KeyHeader, AdminKey);
        }
    }

    public WebApplication App { get; }

    public Uri Address { get; }

    public HttpClient Client { get; }

    public Uri PageUri => new(Address, "/admin/workqueue/ui");

    public IInMemoryWorkQueue Queue(string name) => App.Services.GetRequiredService<IWorkQueueProvider>().GetInMemoryQueue(name);

    public IWorkQueueControl Control(string name) =>
        App.Services.GetRequiredService<IWorkQueueProvider>().TryGetControl(name, out var control) ? control : throw new ArgumentException(name, nameof(name));

    /// <summary>Enqueues a job on the durable queue through its <see cref="IWorkQueue"/>; answers the job's id once Redis has it.</summary>
    public async Task<string> EnqueueDurableAsync(PaymentJob job) =>
        (await App.Services.GetRequiredKeyedService<IWorkQueue>(DurableQueue).EnqueueAsync<PaymentJobHandler, PaymentJob>(job, new JobOptions())).JobId;

    public int QueueCount => App.Services.GetRequiredService<IWorkQueueProvider>().Queues.Count;

    /// <param name="requireKey">Protects the admin endpoints with an API-key policy.</param>
    /// <param name="pageAdminPrefix">Where the page looks for the admin endpoints.</param>
    /// <param name="durable">
    /// Adds the durable queue on this redis-server, its handler doing what <c>durable.Jobs</c> says; hosts given the same
    /// key prefix are instances of one service (one consumer group).
    /// </param>
    /// <param name="testQueues">Adds the <c>io</c> queue and the one named like markup next to <c>default</c>.</param>
    /// <param name="showPayloads">Turns on <see cref="WorkQueueAdminOptions.ShowPayloads"/>.</param>
    public static async Task<DashboardHost> StartAsync(bool requireKey = false, string pageAdminPrefix = "/admin/workqueue", DurableSetup? durable = null, bool testQueues = true, bool showPayloads = false)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Logging.SetMinimumLevel(LogLevel.Warning);
        var queues = builder.Services.AddWorkQueueDashboard()
            .AddWorkQueue(o => { o.MinWorkers = 1; o.MaxWorkers = 4; o.Capacity = 1000; });
        if (testQueues)
        {
            queues
                .AddQueue("io", o => { o.MinWorkers = 2; o.MaxWorkers = 8; o.Capacity = 500; o.Retry.MaxAttempts = 1; })
                .AddQueue(HostileQueue, o => o.MaxWorkers = 2)
                .AddRecurringJob<NightlyReport>(NightlyReport.Id, "0 2 * * *");
            builder.Services.AddSingleton<NightlyReport.Runs>();
        }

        if (durable is not null)
        {
            builder.Services.AddSingleton(durable.Jobs);
            builder.Services.AddRedisWarmup(o => o.Configuration = durable.Redis.Configuration);
            queues.AddDurableQueue<PaymentJobHandler, PaymentJob>(
                DurableQueue,
                o =>
                {
                    o.MinWorkers = durable.Workers;
                    o.MaxWorkers = durable.Workers;
                    o.MaxConcurrency = durable.MaxConcurrency;
                    o.Capacity = durable.Capacity;
                    o.Retry.MaxAttempts = durable.MaxAttempts;
                    o.Retry.BaseDelay = TimeSpan.FromSeconds(2);
                },
                d =>
                {
                    d.KeyPrefix = durable.KeyPrefix;
                    d.Prefetch = durable.Prefetch;
                    d.PollInterval = TimeSpan.FromMilliseconds(200);
                });
        }
        if (requireKey)
        {
            builder.Services.AddSingleton<KeyCheck>();
            builder.Services.AddAuthentication().AddScheme<AuthenticationSchemeOptions, KeyCheck.Handler>(KeyCheck.Scheme, null);
            builder.Services.AddAuthorization(o => o.AddPolicy(KeyCheck.Scheme, p => p.AddAuthenticationSchemes(KeyCheck.Scheme).RequireAuthenticatedUser()));
        }

        var app = builder.Build();
        if (requireKey)
        {
            app.UseAuthentication();
            app.UseAuthorization();
        }

        var admin = app.MapWorkQueueAdmin("/admin/workqueue", o => o.ShowPayloads = showPayloads);
        if (requireKey)
        {
            admin.RequireAuthorization(KeyCheck.Scheme);
        }

        app.MapWorkQueueDashboard("/admin/workqueue/ui", o =>
        {
            o.AdminPrefix = pageAdminPrefix;
            o.ApiKeyHeader = requireKey ? KeyHeader : null;
        });
        await app.StartAsync();
        string address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Single();
        return new DashboardHost(app, new Uri(address));
    }

    /// <summary>Reads this host's admin JSON for a path under the admin prefix.</summary>
    public async Task<System.Text.Json.JsonElement> GetJsonAsync(string path)
    {
        using var response = await Client.GetAsync("/admin/workqueue" + path);
        response.EnsureSuccessStatusCode();
        using var json = System.Text.Json.JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        return json.RootElement.Clone();
    }

    public async ValueTask DisposeAsync()
    {
        Client.Dispose();
        await App.StopAsync();
        await App.DisposeAsync();
    }

    /// <summary>The sample's scheme in miniature: no header is 401, a wrong key 403 (via the policy), the right key passes.</summary>
    internal sealed class KeyCheck
    {
        public const string Scheme = "AdminKey";

        internal sealed class Handler(IOptionsMonitor<AuthenticationSchemeOptions> options, ILoggerFactory logger, UrlEncoder encoder)
            : AuthenticationHandler<AuthenticationSchemeOptions>(options, logger, encoder)
        {
            protected override Task<AuthenticateResult> HandleAuthenticateAsync()
            {
                if (!Request.Headers.TryGetValue(KeyHeader, out var key))
                {
                    return Task.FromResult(AuthenticateResult.NoResult());
                }

                if (key != AdminKey)
                {
                    return Task.FromResult(AuthenticateResult.Fail("wrong key"));
                }

                var identity = new ClaimsIdentity([new Claim(ClaimTypes.Name, "admin")], KeyCheck.Scheme);
                return Task.FromResult(AuthenticateResult.Success(new AuthenticationTicket(new ClaimsPrincipal(identity), KeyCheck.Scheme)));
            }
        }
    }
}
