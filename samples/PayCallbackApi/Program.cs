using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Diagnostics.HealthChecks;
using Microsoft.Extensions.DependencyInjection.Extensions;
using PayCallbackApi;
using PayCallbackApi.Admin;
using PayCallbackApi.Callbacks;
using PayCallbackApi.Diagnostics;
using PayCallbackApi.Orders;
using PayCallbackApi.PostPayment;
using StackExchange.Redis;
using WorkQueue.AspNetCore;

var builder = WebApplication.CreateBuilder(args);
var services = builder.Services;

services.AddOptions<PayCallbackOptions>().BindConfiguration(PayCallbackOptions.Section).ValidateDataAnnotations().ValidateOnStart();
var mode = builder.Configuration.GetValue($"{PayCallbackOptions.Section}:Mode", ProcessingMode.Queue);
string redis = builder.Configuration.GetConnectionString("Redis") ?? "127.0.0.1:6379";
string settlementCron = builder.Configuration[$"{PayCallbackOptions.Section}:{nameof(PayCallbackOptions.SettlementSummaryCron)}"] ?? new PayCallbackOptions().SettlementSummaryCron;
string settlementZone = builder.Configuration[$"{PayCallbackOptions.Section}:{nameof(PayCallbackOptions.SettlementTimeZone)}"] ?? new PayCallbackOptions().SettlementTimeZone;

services.AddProblemDetails();
services.AddSingleton<SignatureVerifier>();
services.TryAddSingleton(TimeProvider.System);
services.AddSingleton<RejectionLog>();
services.AddSingleton<OrderStore>();
services.AddSingleton<ILegacyProviders, LegacyProviders>();
services.AddSingleton<PostPaymentSteps>();
services.AddHostedService<ThreadPoolSampler>();

// The one setting between Queue and Durable mode: where the queues keep their jobs. Naive and Bare declare the same
// queues in memory, so that the admin endpoints and the dashboard look the same in every mode (Naive sends them
// nothing, Bare does not dispatch at all). AddWorkQueue's `default` queue, which it always adds, is not used.
var store = mode == ProcessingMode.Durable ? QueueStore.RedisStreams : QueueStore.InMemory;
services.AddWorkQueue().AddSampleQueues(store, settlementCron, settlementZone);
services.AddWorkQueueDashboard();   // keeps the last five minutes of every queue for the dashboard page
services.AddHealthChecks().AddWorkQueueSaturation(threshold: 0.9);
services.AddSampleOpenTelemetry(builder.Configuration);   // GET /metrics (Prometheus) and request -> job traces

if (mode == ProcessingMode.Naive)
{
    // The incident's setup: a lazily created multiplexer with default settings (no dedicated I/O threads, so its
    // replies are read through the CLR thread pool), connected by whichever request needs it first.
    services.AddSingleton<IConnectionMultiplexer>(_ => ConnectionMultiplexer.Connect(redis));
    services.AddSingleton<IPostPaymentDispatcher, NaiveDispatcher>();
}
else
{
    services.AddRedisWarmup(o =>
    {
        o.Configuration = redis;
        o.WarmupCallbacks.Add(OrderStore.LoadScriptsAsync);
        // The default, spelled out: each connection gets its own reader and writer threads (process-wide flag), so the
        // post-payment jobs' synchronous Redis calls on WorkQueue's workers still get replies if the pool is starved.
        o.DedicatedIoThreads = true;
    });
    services.AddScoped<PostPaymentJob>();
    services.AddScoped<LegacyCallJob>();
    if (mode == ProcessingMode.Bare)
    {
        // Bare mode keeps Queue mode's queues and services (so the process is the same) and dispatches nothing.
        services.AddSingleton<IPostPaymentDispatcher, BareDispatcher>();
    }
    else
    {
        // Queue and Durable mode: the same dispatcher, its claim chosen once from the store (see QueueDispatcher).
        services.AddSingleton<IPostPaymentDispatcher>(sp => ActivatorUtilities.CreateInstance<QueueDispatcher>(sp, store));
    }
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
