// The native AOT smoke app: runs WorkQueue's in-memory queues, a recurring job, configuration binding, the admin
// endpoints and, given `--redis host:port`, a durable queue, then prints each check and exits 0 only if every one passed.
using System.Net;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using WorkQueue;
using WorkQueue.AotSmoke;
using WorkQueue.AspNetCore;

var timeout = TimeSpan.FromSeconds(60);
string? redis = args.SkipWhile(a => a != "--redis").Skip(1).FirstOrDefault();

var builder = WebApplication.CreateSlimBuilder();
builder.WebHost.UseUrls("http://127.0.0.1:0");
builder.Logging.SetMinimumLevel(LogLevel.Warning);

// A queue declared only in configuration, with a setting read by the generated binder.
builder.Configuration.AddInMemoryCollection([new("WorkQueue:Queues:bound:MaxWorkers", "3")]);

var log = new SmokeLog();
var sent = new SentPayments();
builder.Services.AddSingleton(log);
builder.Services.AddSingleton(sent);
var workQueue = builder.Services.AddWorkQueue(o => o.MaxWorkers = 2)
    .AddRecurringJob<TickHandler>(TickHandler.Id, "* * * * * *");
if (redis is not null)
{
    builder.Services.AddRedisWarmup(o => o.Configuration = redis);
    workQueue.AddDurableQueue<PaymentHandler, Payment>("payments", SmokeJsonContext.Default.Payment);
}

await using var app = builder.Build();
app.MapWorkQueueAdmin();
await app.StartAsync();
var address = new Uri(app.Urls.First());
Console.WriteLine($"AOT SMOKE listening at {address}{(redis is null ? " (no Redis: in-memory only)" : $", Redis at {redis}")}");

var queues = app.Services.GetRequiredService<IWorkQueueProvider>();
var queue = queues.GetInMemoryQueue(WorkQueueOptions.DefaultQueueName);
string[] jobs = ["try-enqueue", "enqueue-async", "tracked", "handler-instance", "scheduled", "bound-queue"];
foreach (var job in jobs)
{
    log.Expect($"job ran: {job}");
}

log.Expect("recurring job ran");
log.Check("TryEnqueue accepted", queue.TryEnqueue<RecordHandler, SmokeJob>(new("try-enqueue")), "TryEnqueue returned false");
await queue.EnqueueAsync<RecordHandler, SmokeJob>(new("enqueue-async"));
var tracked = await queue.EnqueueAsync<RecordHandler, SmokeJob>(new("tracked"), new JobOptions { IdempotencyKey = "tracked" });
await queue.EnqueueAsync(new RecordHandler(log), new SmokeJob("handler-instance"));
queue.Schedule<RecordHandler, SmokeJob>(new("scheduled"), TimeSpan.FromMilliseconds(300));
log.Check("bound queue accepted", queues.GetInMemoryQueue("bound").TryEnqueue<RecordHandler, SmokeJob>(new("bound-queue")), "TryEnqueue on 'bound' returned false");
log.Check(
    "configuration bound",
    queues.TryGetControl("bound", out var bound) && bound.GetSnapshot().MaxWorkers == 3,
    $"queue 'bound' has MaxWorkers {(bound is null ? "(no such queue)" : bound.GetSnapshot().MaxWorkers)}, configured 3");

var durableIds = new List<string>();
if (redis is not null)
{
    var payments = app.Services.GetRequiredKeyedService<IWorkQueue>("payments");
    for (int i = 1; i <= 3; i++)
    {
        var payment = new Payment($"p{i}", 10.25m * i, "EUR", new DateTimeOffset(2026, 11, 27, 10, i, 0, TimeSpan.FromHours(1)));
        sent.Add(payment);
        log.Expect($"durable job ran: {payment.Id}");
        durableIds.Add((await payments.EnqueueAsync<PaymentHandler, Payment>(payment, new JobOptions())).JobId);
    }
}

var outcomes = await log.WaitAsync(timeout);

// After the jobs ran: their state as the API and the admin endpoints (compiled by the request delegate generator, their
// JSON written through source-generated metadata) report it.
using var http = new HttpClient { BaseAddress = address, Timeout = TimeSpan.FromSeconds(30) };
var more = new SmokeLog();
var trackedStatus = await queue.GetJobAsync(tracked.JobId);
more.Check("tracked job succeeded", trackedStatus?.State == JobState.Succeeded, $"job {tracked.JobId} is {trackedStatus?.State.ToString() ?? "unknown"}");
await CheckAdminAsync(more, "admin lists the queues", "/admin/workqueue", json =>
{
    var names = json.EnumerateArray().Select(q => q.GetProperty("name").GetString()).ToHashSet();
    string[] expected = redis is null ? ["default", "bound"] : ["default", "bound", "payments"];
    return expected.All(names.Contains) ? null : $"it lists [{string.Join(", ", names)}]";
});
await CheckAdminAsync(more, "admin reads the tracked job", $"/admin/workqueue/default/jobs/{tracked.JobId}", json =>
    json.GetProperty("state").GetString() == "succeeded" ? null : $"its state is {json.GetProperty("state")}");
await CheckAdminAsync(more, "admin reads the recurring jobs", "/admin/workqueue/recurring", json =>
    json.EnumerateArray().Any(j => j.GetProperty("id").GetString() == TickHandler.Id) ? null : $"it lists {json}");
await CheckAdminAsync(more, "admin answers a problem", "/admin/workqueue/nope/depth", json =>
    json.GetProperty("status").GetInt32() == 404 ? null : $"it answered {json}", HttpStatusCode.NotFound);
await CheckAdminAsync(more, "admin answers a validation problem", "/admin/workqueue/default/jobs?limit=0", json =>
    json.GetProperty("errors").TryGetProperty("limit", out _) ? null : $"it answered {json}", HttpStatusCode.BadRequest);
if (redis is not null)
{
    var payments = app.Services.GetRequiredKeyedService<IWorkQueue>("payments");
    foreach (var id in durableIds)
    {
        await Eventually(more, $"durable job {id} succeeded", async () =>
            await payments.GetJobAsync(id) is { State: JobState.Succeeded } ? null : "not succeeded yet");
        await CheckAdminAsync(more, $"admin reads durable job {id}", $"/admin/workqueue/payments/jobs/{id}", json =>
            json.GetProperty("state").GetString() == "succeeded" ? null : $"its state is {json.GetProperty("state")}");
    }

    await CheckAdminAsync(more, "admin reads the durable queue", "/admin/workqueue/payments", json =>
        json.TryGetProperty("durable", out var durable) && durable.ValueKind == JsonValueKind.Object ? null : $"it has no durable section: {json}");
    await CheckAdminAsync(more, "admin lists the durable dead letters", "/admin/workqueue/payments/dead-letters", json =>
        json.ValueKind == JsonValueKind.Array ? null : $"it answered {json}");
}

outcomes = [.. outcomes, .. await more.WaitAsync(timeout)];
foreach (var (check, failure) in outcomes)
{
    Console.WriteLine(failure is null ? $"  ok      {check}" : $"  FAILED  {check}: {failure}");
}

int failed = outcomes.Count(o => o.Failure is not null);
Console.WriteLine($"AOT SMOKE {(failed == 0 ? "PASSED" : "FAILED")}: {outcomes.Count - failed} of {outcomes.Count} checks passed");
using (var stop = new CancellationTokenSource(timeout))
{
    await app.StopAsync(stop.Token);
}

return failed == 0 ? 0 : 1;

// One GET; its status and JSON body checked.
async Task CheckAdminAsync(SmokeLog checks, string check, string path, Func<JsonElement, string?> verify, HttpStatusCode expected = HttpStatusCode.OK)
{
    string? failure;
    try
    {
        using var response = await http.GetAsync(path);
        string body = await response.Content.ReadAsStringAsync();
        if (response.StatusCode != expected)
        {
            failure = $"GET {path} answered {(int)response.StatusCode}, not {(int)expected}: {body}";
        }
        else
        {
            using var json = JsonDocument.Parse(body);
            failure = verify(json.RootElement) is { } why ? $"GET {path}: {why}" : null;
        }
    }
    catch (Exception ex)
    {
        failure = $"GET {path}: {ex.GetType().Name}: {ex.Message}";
    }

    checks.Check(check, failure is null, failure ?? string.Empty);
}

// Polls `probe` (null: passed) until it passes or the timeout ends; a state written after a job runs (a durable job's
// acknowledgement) lands a moment later.
async Task Eventually(SmokeLog checks, string check, Func<Task<string?>> probe)
{
    var deadline = DateTime.UtcNow + timeout;
    string? failure;
    while (true)
    {
        try
        {
            failure = await probe();
        }
        catch (Exception ex)
        {
            failure = $"{ex.GetType().Name}: {ex.Message}";
        }

        if (failure is null || DateTime.UtcNow > deadline)
        {
            break;
        }

        await Task.Delay(100);
    }

    checks.Check(check, failure is null, failure ?? string.Empty);
}
