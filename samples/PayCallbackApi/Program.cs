using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Diagnostics.HealthChecks;
using Microsoft.Extensions.DependencyInjection.Extensions;
using PayCallbackApi;
using PayCallbackApi.Admin;
using PayCallbackApi.Callbacks;
using PayCallbackApi.Diagnostics;
using PayCallbackApi.Orders;
using PayCallbackApi.PostPayment;
using PayCallbackApi.Settlement;
using StackExchange.Redis;
using WorkQueue;
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

// WorkQueue:Queues:{name} in configuration overrides the queues' settings below (and :Durable the durable ones).
var workQueue = services.AddWorkQueue(o => ConfigurePostPayment(o, capacity: 50_000));
services.AddWorkQueueDashboard();   // keeps the last five minutes of every queue for the dashboard page
services.AddHealthChecks().AddWorkQueueSaturation(threshold: 0.9);
services.AddSampleOpenTelemetry(builder.Configuration);   // GET /metrics (Prometheus) and request -> job traces

if (mode == ProcessingMode.Naive)
{
    // The incident's setup: a lazily created multiplexer with default settings (no dedicated I/O threads, so its
    // replies are read through the CLR thread pool), connected by whichever request needs it first. The legacy queue
    // is registered only so that the admin endpoints look the same; nothing is sent to it.
    workQueue.AddQueue(PostPaymentQueues.Legacy, ConfigureLegacy);
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
    if (mode is ProcessingMode.Queue or ProcessingMode.Bare)
    {
        // Bare mode keeps Queue mode's queues and services (so the process is the same) and dispatches nothing.
        workQueue.AddQueue(PostPaymentQueues.Legacy, ConfigureLegacy);
        if (mode == ProcessingMode.Bare)
        {
            services.AddSingleton<IPostPaymentDispatcher, BareDispatcher>();
        }
        else
        {
            services.AddSingleton<IPostPaymentDispatcher, QueueDispatcher>();
        }

        services.AddSingleton<ILegacyQueue, InMemoryLegacyQueue>();

        // The nightly settlement summary, on the in-memory default queue: this instance's own schedule.
        workQueue.AddRecurringJob<SettlementSummaryJob>(SettlementSummaryJob.Id, settlementCron, o => o.TimeZone = settlementZone);
    }
    else
    {
        // Both queues in Redis Streams: a callback is answered 200 once its job is stored, and a job whose process dies
        // is reclaimed by the next consumer (this process restarted, or another instance) after ClaimTimeout.
        workQueue
            .AddDurableQueue<PostPaymentJob, PaidOrder>(
                PostPaymentQueues.Payments,
                o => ConfigurePostPayment(o, capacity: 200_000),   // the backlog waits in Redis, not in memory
                ConfigureDurable)
            .AddDurableQueue<LegacyCallJob, PaidOrder>(PostPaymentQueues.Legacy, ConfigureLegacy, ConfigureDurable);
        services.AddSingleton<IPostPaymentDispatcher, DurableDispatcher>();
        services.AddSingleton<ILegacyQueue, DurableLegacyQueue>();

        // The nightly settlement summary on a durable queue of its own: once per night across every instance, and a
        // night missed while all were down runs at the next start (MissedOccurrences = RunOnce, the default).
        workQueue
            .AddDurableQueue<SettlementSummaryJob, RecurringOccurrence>(SettlementSummaryJob.DurableQueue, o => o.MaxWorkers = 1, ConfigureDurable)
            .AddRecurringJob<SettlementSummaryJob>(SettlementSummaryJob.Id, settlementCron, o =>
            {
                o.Queue = SettlementSummaryJob.DurableQueue;
                o.TimeZone = settlementZone;
            });
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

// The post-payment jobs' queue (Queue mode: `default`; Durable mode: `payments`): few threads (Redis calls only), full
// means 503 + Retry-After for the gateway, failed attempts retried twice.
static void ConfigurePostPayment(WorkQueueOptions o, int capacity)
{
    o.MinWorkers = 2;
    o.MaxWorkers = 16;
    o.Capacity = capacity;
    o.FullMode = QueueFullMode.Reject;
    o.Retry.MaxAttempts = 3;
    o.Retry.BaseDelay = TimeSpan.FromMilliseconds(200);

    // Every callback's job is visible in the dashboard's job browser and the admin search, not only keyed ones.
    o.TrackAllJobs = true;
}

// The bulkhead for the blocking provider calls: one job per callback making 2 calls of ProviderLatencyMs (20 ms) at
// 3,000 callbacks/s keeps about 120 threads blocked, so it may grow to 256 (dedicated threads, never the CLR pool's), starting at 32.
static void ConfigureLegacy(WorkQueueOptions o)
{
    o.MinWorkers = 32;
    o.MaxWorkers = 256;
    o.Capacity = 200_000;
    o.FullMode = QueueFullMode.Wait;
    o.Retry.MaxAttempts = 3;
    o.Retry.BaseDelay = TimeSpan.FromMilliseconds(200);
}

// A sample's choice for a quick recovery after a kill: another consumer takes a dead one's jobs after 10 s.
static void ConfigureDurable(DurableQueueOptions d)
{
    d.ClaimTimeout = TimeSpan.FromSeconds(10);
    d.HeartbeatInterval = TimeSpan.FromSeconds(2);
}

/// <summary>The entry point, visible to the tests.</summary>
public partial class Program;
