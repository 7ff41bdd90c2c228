using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using StackExchange.Redis;
using WorkQueue;
using WorkQueue.AspNetCore;

// Usage: RoundCpu <redis host:port> <jobs (0: idle for 30 s)> <records: 1|0>
// Runs <jobs> durable jobs (8 workers, 4 producers of 64 in flight each) after a warm-up of 2,000, and prints what Redis
// spent on them per job: process CPU (INFO cpu) and the commandstats of the commands the round sends.
string endpoint = args[0];
if (args[1] == "direct")
{
    // The round script alone, called directly (no store): 2,000 rounds of 40 plain enqueues, then 2,000 of 40 plain
    // acknowledgements with records, in the layout given (full: 3 arguments an enqueue and 6 an acknowledgement, as
    // every version reads; plain: -n and {keyed}|{plain}, this version only). Prints evalsha's time per job minus its
    // commands' (Lua itself), per part.
    await Direct(endpoint, args[2] == "plain");
    return;
}

int jobs = int.Parse(args[1], CultureInfo.InvariantCulture);
bool records = args[2] == "1";

var builder = Host.CreateApplicationBuilder();
builder.Logging.ClearProviders();
builder.Services.AddSingleton<Done>();
builder.Services.AddRedisWarmup(o => o.Configuration = endpoint);
builder.Services.AddWorkQueue().AddDurableQueue<Handler, Order>(
    "d1",
    o =>
    {
        o.MinWorkers = 8;
        o.MaxWorkers = 8;
        o.Capacity = 100_000;
        if (!records)
        {
            o.FinishedJobRetention = TimeSpan.Zero;
        }
    },
    d => d.KeyPrefix = "cpu");
using var host = builder.Build();
await host.StartAsync();
var queue = host.Services.GetRequiredService<IDurableQueue<Order>>();
var done = host.Services.GetRequiredService<Done>();
await using var admin = await ConnectionMultiplexer.ConnectAsync(endpoint + ",allowAdmin=true");
var server = admin.GetServer(admin.GetEndPoints()[0]);

await Run(2_000);
if (jobs == 0)
{
    // Idle: what the instance sends over 30 s with nothing to do (defaults: PollInterval 1 s, HeartbeatInterval 10 s).
    await Task.Delay(TimeSpan.FromSeconds(2));
    await server.ExecuteAsync("CONFIG", "RESETSTAT");
    await Task.Delay(TimeSpan.FromSeconds(30));
    var idle = (await server.InfoAsync("commandstats")).SelectMany(g => g).Where(p => p.Key is not "cmdstat_info" and not "cmdstat_config|resetstat")
        .ToDictionary(p => p.Key[8..], p => long.Parse(Field(p.Value, "calls"), CultureInfo.InvariantCulture));
    Console.WriteLine($"idle 30 s, records {(records ? "on" : "off")}: {idle.Values.Sum() / 30.0:F1} commands/s: " + string.Join(", ", idle.OrderByDescending(p => p.Value).Select(p => $"{p.Key} {p.Value}")));
    await host.StopAsync();
    return;
}

await server.ExecuteAsync("CONFIG", "RESETSTAT");
double cpuBefore = Cpu(await server.InfoAsync("cpu"));
await Run(jobs);
double cpu = Cpu(await server.InfoAsync("cpu")) - cpuBefore;
var stats = (await server.InfoAsync("commandstats")).SelectMany(g => g).ToDictionary(p => p.Key, p => p.Value);
string[] outside = ["cmdstat_exec", "cmdstat_evalsha", "cmdstat_eval", "cmdstat_xreadgroup", "cmdstat_multi", "cmdstat_select", "cmdstat_info", "cmdstat_config|resetstat", "cmdstat_script|load", "cmdstat_ping", "cmdstat_client|setinfo", "cmdstat_subscribe"];
double script = stats.Where(p => p.Key is "cmdstat_evalsha" or "cmdstat_eval").Sum(p => Usec(p.Value));
double inner = stats.Where(p => !outside.Contains(p.Key)).Sum(p => Usec(p.Value));
double rounds = stats.Where(p => p.Key is "cmdstat_evalsha" or "cmdstat_eval").Sum(p => double.Parse(Field(p.Value, "calls"), CultureInfo.InvariantCulture));
Console.WriteLine($"jobs {jobs}, records {(records ? "on" : "off")}: process CPU {cpu * 1e6 / jobs:F2} us/job; scripts {script / jobs:F2} us/job, of which Lua itself (scripts minus their commands) {(script - inner) / jobs:F2} us/job; {jobs / rounds:F0} jobs a script call");
foreach (var (name, value) in stats.OrderByDescending(p => Usec(p.Value)))
{
    long calls = long.Parse(Field(value, "calls"), CultureInfo.InvariantCulture);
    Console.WriteLine($"  {name[8..],-18} {Usec(value) / jobs,7:F2} us/job  {(double)calls / jobs,7:F3} calls/job  {Usec(value) / Math.Max(1, calls),9:F1} us/call");
}

await host.StopAsync();

async Task Run(int count)
{
    done.Reset(count);
    int next = -1;
    await Task.WhenAll(Enumerable.Range(0, 4).Select(_ => Task.Run(async () =>
    {
        var inFlight = new List<Task>(64);
        while (Interlocked.Increment(ref next) < count)
        {
            inFlight.Add(queue.EnqueueAsync(new Order(next, "widget", 3)).AsTask());
            if (inFlight.Count == 64)
            {
                await Task.WhenAll(inFlight);
                inFlight.Clear();
            }
        }

        await Task.WhenAll(inFlight);
    })));
    await done.WaitAsync(TimeSpan.FromMinutes(5));
}

static async Task Direct(string endpoint, bool plain)
{
    const int Rounds = 2_000, PerRound = 40;
    string script = (string)typeof(IDurableQueue<>).Assembly.GetType("WorkQueue.AspNetCore.Durable.DurableScripts")!
        .GetField("Round")!.GetRawConstantValue()!;
    await using var redis = await ConnectionMultiplexer.ConnectAsync(endpoint + ",allowAdmin=true");
    var db = redis.GetDatabase();
    var server = redis.GetServer(redis.GetEndPoints()[0]);
    RedisKey[] keys = ["d:{q}:stream", "d:{q}:delayed", "d:{q}:scheduled", "d:{q}:recurring", "d:{q}:ids", "d:{q}:epoch"];
    await db.StreamCreateConsumerGroupAsync(keys[0], "workers", StreamPosition.Beginning, createStream: true);
    var sha = (byte[])(await server.ScriptLoadAsync(script));
    List<RedisValue> Header(RedisValue count, RedisValue keyed) => ["workers", "c", 10_000_000, "d:{q}:nudge", 0, 256, count, keyed, 0, 600_000, 1_000_000, 0, ""];
    async Task<(double Lua, double Script)> Part(Func<Task<List<RedisValue>>> round)
    {
        await server.ExecuteAsync("CONFIG", "RESETSTAT");
        for (int r = 0; r < Rounds; r++)
        {
            var a = await round();
            await db.ScriptEvaluateAsync(sha, keys, [.. a]);
        }

        var stats = (await server.InfoAsync("commandstats")).SelectMany(g => g).ToDictionary(p => p.Key, p => p.Value);
        if (Environment.GetEnvironmentVariable("ROUND_CPU_VERBOSE") == "1")
        {
            Console.WriteLine(string.Join("\n", stats.Select(p => $"  {p.Key} {p.Value}")));
            Console.WriteLine($"  pending {(await db.StreamPendingAsync(keys[0], "workers")).PendingMessageCount}, ended {await db.HashLengthAsync("d:{q}:ended")}");
        }

        string[] outside = ["cmdstat_evalsha", "cmdstat_xreadgroup", "cmdstat_config|resetstat", "cmdstat_info", "cmdstat_select"];
        double script = Usec(stats["cmdstat_evalsha"]);
        double inner = stats.Where(p => !outside.Contains(p.Key)).Sum(p => Usec(p.Value));
        return ((script - inner) / (Rounds * PerRound), script / (Rounds * PerRound));
    }

    string payload = "{\"id\":1,\"sku\":\"widget\",\"quantity\":3}";
    var enqueue = await Part(() =>
    {
        var a = Header(plain ? -PerRound : PerRound, 0);
        a.AddRange(Enumerable.Repeat((RedisValue)payload, PerRound));
        if (!plain)
        {
            a.AddRange(Enumerable.Repeat(RedisValue.EmptyString, 2 * PerRound));
        }

        return Task.FromResult(a);
    });
    var ack = await Part(async () =>
    {
        var read = await db.StreamReadGroupAsync(keys[0], "workers", "c", StreamPosition.NewMessages, PerRound);
        var a = Header(0, plain ? $"0|{read.Length}" : 0);
        foreach (var e in read)
        {
            a.AddRange(plain ? [e.Id, 1_700_000_000_000, 1_700_000_000_100] : [e.Id, "", 1, 1_700_000_000_000, 1_700_000_000_100, ""]);
        }

        return a;
    });
    Console.WriteLine($"direct, {(plain ? "plain" : "full")} layout, {PerRound} a round: enqueue script {enqueue.Script:F2} us/job (Lua itself {enqueue.Lua:F2}); acknowledgement with records script {ack.Script:F2} us/job (Lua itself {ack.Lua:F2})");
}

static double Cpu(IGrouping<string, KeyValuePair<string, string>>[] info)
{
    var all = info.SelectMany(g => g).ToDictionary(p => p.Key, p => p.Value);
    return double.Parse(all["used_cpu_sys"], CultureInfo.InvariantCulture) + double.Parse(all["used_cpu_user"], CultureInfo.InvariantCulture);
}

static double Usec(string value) => double.Parse(Field(value, "usec"), CultureInfo.InvariantCulture);

static string Field(string value, string name) =>
    value.Split(',').Select(p => p.Split('=')).First(p => p[0] == name)[1];

public sealed record Order(int Id, string Sku, int Quantity);

public sealed class Done
{
    private int _left;
    private TaskCompletionSource _all = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public void Reset(int count)
    {
        _all = new(TaskCreationOptions.RunContinuationsAsynchronously);
        Volatile.Write(ref _left, count);
    }

    public void One()
    {
        if (Interlocked.Decrement(ref _left) == 0)
        {
            _all.TrySetResult();
        }
    }

    public Task WaitAsync(TimeSpan timeout) => _all.Task.WaitAsync(timeout);
}

public sealed class Handler(Done done) : IJobHandler<Order>
{
    public ValueTask ExecuteAsync(Order payload, CancellationToken cancellationToken)
    {
        done.One();
        return default;
    }
}
