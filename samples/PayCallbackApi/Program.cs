using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Diagnostics.HealthChecks;
using PayCallbackApi;
using PayCallbackApi.Admin;
using PayCallbackApi.Callbacks;
using PayCallbackApi.Diagnostics;
using PayCallbackApi.Orders;
using PayCallbackApi.PostPayment;
using StackExchange.Redis;
using WorkQueue;
using WorkQueue.AspNetCore;

var builder = WebApplication.CreateBuilder(args);
var services = builder.Services;

services.AddOptions<PayCallbackOptions>().BindConfiguration(PayCallbackOptions.Section).ValidateDataAnnotations().ValidateOnStart();
var mode = builder.Configuration.GetValue($"{PayCallbackOptions.Section}:Mode", ProcessingMode.Queue);
string redis = builder.Configuration.GetConnectionString("Redis") ?? "127.0.0.1:6379";

services.AddProblemDetails();
services.AddSingleton<SignatureVerifier>();
services.AddSingleton<OrderStore>();
services.AddSingleton<LegacyProviders>();
services.AddSingleton<PostPaymentSteps>();
services.AddHostedService<ThreadPoolSampler>();

// Both modes register the queues (so the admin endpoints look the same); only Queue mode sends work to them.
// WorkQueue:Queues:{name} in configuration overrides these defaults.
services.AddWorkQueue(o =>
    {
        o.MinWorkers = 2;
        o.MaxWorkers = 16;
        o.Capacity = 50_000;
        o.FullMode = QueueFullMode.Reject;
        o.Retry.MaxAttempts = 3;
        o.Retry.BaseDelay = TimeSpan.FromMilliseconds(200);
    })
    .AddQueue(PostPaymentQueues.Legacy, o =>
    {
        o.MinWorkers = 4;
        o.MaxWorkers = 128;
        o.Capacity = 100_000;
        o.FullMode = QueueFullMode.Wait;
        o.Retry.MaxAttempts = 3;
        o.Retry.BaseDelay = TimeSpan.FromMilliseconds(200);
    });
services.AddWorkQueueDashboard();   // keeps the last five minutes of every queue for the dashboard page
services.AddHealthChecks().AddWorkQueueSaturation(threshold: 0.9);
services.AddSampleOpenTelemetry(builder.Configuration);   // GET /metrics (Prometheus) and request -> job traces

if (mode == ProcessingMode.Queue)
{
    services.AddRedisWarmup(o =>
    {
        o.Configuration = redis;
        o.WarmupCallbacks.Add(OrderStore.LoadScriptsAsync);
        // The default, spelled out: each connection gets its own reader and writer threads (process-wide flag), so the
        // post-payment jobs' synchronous Redis calls on WorkQueue's workers still get replies if the pool is starved.
        o.DedicatedIoThreads = true;
    });
    services.AddSingleton<IPostPaymentDispatcher, QueueDispatcher>();
    services.AddScoped<PostPaymentJob>();
    services.AddScoped<SmsJob>();
    services.AddScoped<DeliveryJob>();
}
else
{
    // The incident's setup: a lazily created multiplexer with default settings (no dedicated I/O threads, so its
    // replies are read through the CLR thread pool), connected by whichever request needs it first.
    services.AddSingleton<IConnectionMultiplexer>(_ => ConnectionMultiplexer.Connect(redis));
    services.AddSingleton<IPostPaymentDispatcher, NaiveDispatcher>();
}

bool adminKeySet = !string.IsNullOrEmpty(builder.Configuration[AdminKeyAuthentication.ConfigKey]);
if (adminKeySet)
{
    services.AddAuthentication().AddScheme<AuthenticationSchemeOptions, AdminKeyAuthentication>(AdminKeyAuthentication.SchemeName, null);
    services.AddAuthorization(AdminKeyAuthentication.AddPolicy);
}

var app = builder.Build();
app.Logger.LogInformation("PayCallbackApi starting in {Mode} mode; Redis at {Redis}.", mode, redis);
if (adminKeySet)
{
    app.UseAuthentication();
    app.UseAuthorization();
}

app.MapPost("/api/pay/callback", CallbackEndpoint.HandleAsync);
app.MapGet("/api/orders/{orderId}", OrderEndpoints.GetAsync);

var admin = app.MapWorkQueueAdmin("/admin/workqueue");
if (adminKeySet)
{
    admin.RequireAuthorization(AdminKeyAuthentication.Policy);
}

// The page holds no data; its calls go to the admin endpoints above, with their protection (the key when one is set).
app.MapWorkQueueDashboard("/admin/workqueue/ui", o =>
{
    o.AdminPrefix = "/admin/workqueue";
    o.ApiKeyHeader = adminKeySet ? AdminKeyAuthentication.Header : null;
});

app.MapSampleMetrics(adminKeySet);   // protected like the admin endpoints

app.MapHealthChecks("/health/ready", new HealthCheckOptions { Predicate = c => c.Tags.Contains(WorkQueueHealthCheckTags.Ready) });
app.MapHealthChecks("/health/live", new HealthCheckOptions { Predicate = _ => false });

app.Run();

/// <summary>The entry point, visible to the tests.</summary>
public partial class Program;
