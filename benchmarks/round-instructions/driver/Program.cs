// The D1 workload (DurableThroughputBenchmarks.WorkQueue_Durable: 4 producers with 64 awaited enqueues each, 8 workers,
// prefetch 256, a trivial job; heartbeats put off past the run) run once against a redis-server started under callgrind, with the queue's default job
// records or without them. Between "measure" and "dump" only the jobs run: warm-up jobs first (scripts loaded, groups
// made), then Redis's counters are reset (CONFIG RESETSTAT, callgrind_control -z), the jobs are enqueued, run and
// acknowledged (nothing pending in the group), and the counters are read (INFO commandstats, callgrind_control -d).
// Then the same wall time again with the queue idle, dumped apart, so the idle work of that window can be subtracted.
// Usage: RoundDriver <redis port> <jobs> <records: yes|no> <callgrind pid or 0>
// Prints: "commands <name> <calls>" lines, "elapsed_ms <ms>", one per phase after "phase jobs" / "phase idle".
using System.Diagnostics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using StackExchange.Redis;
using WorkQueue;
using WorkQueue.AspNetCore;

int port = int.Parse(args[0]);
int jobs = int.Parse(args[1]);
bool records = args[2] == "yes";
int callgrind = int.Parse(args[3]);
// Generous timeouts: under callgrind, on a busy machine, a round can take seconds.
string configuration = $"127.0.0.1:{port},allowAdmin=true,syncTimeout=300000,asyncTimeout=300000";

var builder = Host.CreateApplicationBuilder();
builder.Logging.ClearProviders();
builder.Services.AddRedisWarmup(o => o.Configuration = configuration);
builder.Services.AddWorkQueue().AddDurableQueue<CountingJob, Job>("bench", o =>
{
    o.MinWorkers = 8;
    o.MaxWorkers = 8;
    o.AutoScale.Enabled = false;
    o.Capacity = 1_000_000;
    if (!records)
    {
        o.FinishedJobRetention = TimeSpan.Zero;
    }
}, d =>
{
    d.Prefetch = 256;
    // No heartbeat within the run: under callgrind the jobs take minutes, and each heartbeat (XPENDING, XCLAIM of every
    // entry held) would add Redis work per job that depends on how long the run took, not on the build.
    d.ClaimTimeout = TimeSpan.FromDays(1);
    d.HeartbeatInterval = TimeSpan.FromHours(8);
});
using var host = builder.Build();
await host.StartAsync();
var enqueue = Producer(host.Services);
using var admin = await ConnectionMultiplexer.ConnectAsync(configuration);
var server = admin.GetServer("127.0.0.1", port);
var db = admin.GetDatabase();

await RunJobs(1_000);
await Measure("jobs", () => RunJobs(jobs), idle: false);
await host.StopAsync(TimeSpan.FromSeconds(30));
return 0;

async Task Measure(string phase, Func<Task> work, bool idle)
{
    await server.ExecuteAsync("CONFIG", "RESETSTAT");
    Callgrind("-z");
    var clock = Stopwatch.StartNew();
    await work();
    var elapsed = clock.Elapsed;
    Callgrind("-d");
    var info = (string?)await server.ExecuteAsync("INFO", "commandstats") ?? "";
    Console.WriteLine($"phase {phase}");
    foreach (var line in info.Split('\n'))
    {
        // cmdstat_evalsha:calls=12,usec=...
        if (line.StartsWith("cmdstat_", StringComparison.Ordinal))
        {
            var name = line[8..line.IndexOf(':')];
            var calls = line[(line.IndexOf("calls=", StringComparison.Ordinal) + 6)..line.IndexOf(',')];
            Console.WriteLine($"commands {name} {calls}");
        }
    }

    Console.WriteLine($"elapsed_ms {elapsed.TotalMilliseconds:F0}");
    if (!idle)
    {
        await Measure("idle", () => Task.Delay(elapsed), idle: true);
    }
}

void Callgrind(string what)
{
    if (callgrind == 0)
    {
        return;
    }

    using var p = Process.Start(new ProcessStartInfo("callgrind_control", $"{what} {callgrind}") { RedirectStandardOutput = true, RedirectStandardError = true })!;
    var stderr = p.StandardError.ReadToEndAsync();
    p.StandardOutput.ReadToEnd();
    stderr.GetAwaiter().GetResult();
    p.WaitForExit();
    if (p.ExitCode != 0)
    {
        throw new InvalidOperationException($"callgrind_control {what} {callgrind} exited with {p.ExitCode}");
    }
}

async Task RunJobs(int count)
{
    CountingJob.Reset(count);
    var producers = new Task[4];
    for (int p = 0; p < producers.Length; p++)
    {
        int producer = p;
        producers[p] = Task.Run(async () =>
        {
            var window = new List<Task>(64);
            int next = producer;
            while (next < count)
            {
                window.Clear();
                for (; window.Count < 64 && next < count; next += producers.Length)
                {
                    window.Add(enqueue(new Job(next)));
                }

                await Task.WhenAll(window);
            }
        });
    }

    await Task.WhenAll(producers);
    await CountingJob.All.WaitAsync(TimeSpan.FromMinutes(20));
    // The last acknowledgements leave with the store's next round: wait until the group holds nothing pending.
    // (The queue's stream key is workqueue:{bench}:stream in every build since fee1c93.)
    var deadline = DateTime.UtcNow.AddMinutes(5);
    while (db.StreamGroupInfo("workqueue:{bench}:stream").Sum(g => g.PendingMessageCount) > 0)
    {
        if (DateTime.UtcNow > deadline)
        {
            throw new TimeoutException("Entries still pending 5 minutes after the last job ran.");
        }

        await Task.Delay(20);
    }
}

// The producer of the build under test: a durable queue's IWorkQueue since issue 29, its IDurableQueue<T> in the builds
// before (found by name, so one source compiles against both). The reflection is the client's cost; what is measured is
// Redis's.
static Func<Job, Task> Producer(IServiceProvider services)
{
    var legacy = typeof(DurableQueueOptions).Assembly.GetType("WorkQueue.AspNetCore.IDurableQueue`1")?.MakeGenericType(typeof(Job));
    if (legacy is null)
    {
        var queue = services.GetRequiredKeyedService<IWorkQueue>("bench");
        return job => queue.EnqueueAsync<CountingJob, Job>(job).AsTask();
    }

    object producer = services.GetRequiredKeyedService(legacy, "bench");
    var method = legacy.GetMethod("EnqueueAsync", [typeof(Job), typeof(CancellationToken)])!;
    return job => ((ValueTask<string>)method.Invoke(producer, [job, CancellationToken.None])!).AsTask();
}

/// <summary>A trivial job that counts itself.</summary>
public sealed class CountingJob : IJobHandler<Job>
{
    private static int s_left;
    private static TaskCompletionSource s_all = new();

    public static Task All => s_all.Task;

    public static void Reset(int count)
    {
        s_all = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Volatile.Write(ref s_left, count);
    }

    public ValueTask ExecuteAsync(Job payload, CancellationToken cancellationToken)
    {
        if (Interlocked.Decrement(ref s_left) == 0)
        {
            s_all.TrySetResult();
        }

        return default;
    }
}

/// <summary>The payload.</summary>
public sealed record Job(int Id);
