using System.Collections.Concurrent;
using System.Diagnostics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Logging;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Durable queues on Redis Cluster (<see cref="RedisCluster"/>: three masters, three replicas): queues whose slots are
/// on different masters each work through their <see cref="IWorkQueue"/>, and a queue keeps its jobs when its slot
/// moves to another master while it runs. Each test starts its own cluster: a slot move changes it.
/// </summary>
public sealed class DurableClusterTests(ITestOutputHelper output)
{
    [Fact]
    public async Task Queues_OnSlotsOfDifferentMasters_EnqueueKeysSchedulesRecurringStatusCancelAndSearchWorkOnEach()
    {
        await using var cluster = await RedisCluster.StartAsync();
        string[] queues = await QueuesOnDifferentMastersAsync(cluster, 3);
        var log = new JobLog();
        var ticks = new DurableRecurringTests.OccurrenceLog();
        await using var host = await StartAsync(cluster, log, ticks, DurableTestHost.NewPrefix(), queues, recurring: true);
        var provider = host.Services.GetRequiredService<IWorkQueueProvider>();

        for (int q = 0; q < queues.Length; q++)
        {
            string name = queues[q];
            var queue = provider.GetQueue(name);
            Assert.Same(queue, host.Services.GetRequiredKeyedService<IWorkQueue>(name));
            int first = q * 1000;

            var ran = new List<string>();
            for (int n = first; n < first + 5; n++)
            {
                ran.Add((await queue.EnqueueAsync<TestJobHandler, TestJob>(new TestJob(n, name), new JobOptions())).JobId);
            }

            // A key held by a job scheduled an hour away: the second enqueue adds nothing and is told the first job.
            var keyed = await queue.EnqueueAsync<TestJobHandler, TestJob>(new TestJob(first + 100, name), new JobOptions { IdempotencyKey = "k-" + name, Delay = TimeSpan.FromHours(1) });
            var again = await queue.EnqueueAsync<TestJobHandler, TestJob>(new TestJob(first + 101, name), new JobOptions { IdempotencyKey = "k-" + name });
            Assert.True(keyed.Created);
            Assert.Equal(new EnqueueResult(keyed.JobId, false), again);
            Assert.Equal(JobState.Scheduled, (await queue.GetJobAsync(keyed.JobId))!.State);

            ran.Add(await queue.ScheduleAsync<TestJobHandler, TestJob>(new TestJob(first + 5, name), TimeSpan.FromSeconds(1)));
            await log.WaitUntilAsync(() => Enumerable.Range(first, 6).All(n => log.CallsOf(n) == 1), $"the jobs of {name}");
            foreach (string id in ran)
            {
                await Eventually.ValueAsync(() => queue.GetJobAsync(id), j => j?.State == JobState.Succeeded, $"job {id} of {name} to succeed");
            }

            var canceled = await queue.CancelAsync(keyed.JobId);
            Assert.Equal(JobCancelOutcome.Canceled, canceled.Outcome);
            Assert.Equal(JobState.Canceled, (await queue.GetJobAsync(keyed.JobId))!.State);
            Assert.Equal(0, log.CallsOf(first + 100) + log.CallsOf(first + 101));

            var succeeded = await queue.FindJobsAsync(new JobQuery { NameContains = nameof(TestJobHandler), States = [JobState.Succeeded] });
            Assert.Equal(ran.Order(), succeeded.Jobs.Select(j => j.Id).Order());
            Assert.Equal([keyed.JobId], (await queue.FindJobsAsync(new JobQuery { States = [JobState.Canceled] })).Jobs.Select(j => j.Id));
            await Eventually.ValueAsync(
                () => queue.FindJobsAsync(new JobQuery { NameContains = "tick", States = [JobState.Succeeded] }),
                p => p.Jobs.Count >= 2,
                $"the recurring job on {name} to run twice");
        }

        var health = host.Services.GetRequiredService<HealthCheckService>();
        Assert.Equal(HealthStatus.Healthy, (await health.CheckHealthAsync()).Status);
    }

    [Fact]
    public async Task SlotMovedMidLoad_NothingAcknowledgedLost_NoneRunTwiceUnlessItsEnqueueWasRetried()
    {
        await using var cluster = await RedisCluster.StartAsync();
        string[] queues = await QueuesOnDifferentMastersAsync(cluster, 2);
        string moving = queues[0];
        var log = new JobLog();
        var starts = new ConcurrentQueue<long>();
        log.Behavior = async (job, call, ct) =>
        {
            starts.Enqueue(Stopwatch.GetTimestamp());
            await Task.Delay(2, ct);
            if (FailsFirst(job.N) && call == 1)
            {
                throw new InvalidOperationException("first attempt fails");
            }
        };
        string prefix = DurableTestHost.NewPrefix();
        var ticks = new DurableRecurringTests.OccurrenceLog();
        var logs = new LogCapture();
        await using var host = await StartAsync(cluster, log, ticks, prefix, queues, recurring: true, logs: logs, configure: o =>
        {
            o.Retry.MaxAttempts = 3;
            o.Retry.BaseDelay = TimeSpan.FromMilliseconds(100);
        });
        var queue = host.Services.GetRequiredService<IWorkQueueProvider>().GetQueue(moving);

        // Every key the round names exists on the source while the slot moves (a job scheduled an hour away holds the
        // delayed and scheduled keys, the recurring job its hash), so the round runs there until the first of them
        // moves, and meets the keys it does not name (records, idempotency keys) already moved.
        string later = await queue.ScheduleAsync<TestJobHandler, TestJob>(new TestJob(-1, moving), TimeSpan.FromHours(1));
        const int Jobs = 1500;
        var acknowledged = new ConcurrentDictionary<int, string>();
        var retried = new ConcurrentDictionary<int, string>();
        var refusals = new ConcurrentDictionary<string, byte>();
        var acks = new ConcurrentQueue<long>();
        var producing = Task.Run(async () =>
        {
            for (int n = 0; n < Jobs; n++)
            {
                var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(60);
                while (true)
                {
                    try
                    {
                        // A mix that puts more of the queue's keys in the slot: idempotency keys, scheduled jobs, retries.
                        var options = new JobOptions
                        {
                            IdempotencyKey = n % 3 == 0 ? "k" + n : null,
                            Delay = n % 5 == 0 ? TimeSpan.FromMilliseconds(300) : null,
                        };
                        acknowledged[n] = (await queue.EnqueueAsync<TestJobHandler, TestJob>(new TestJob(n, moving), options)).JobId;
                        acks.Enqueue(Stopwatch.GetTimestamp());
                        break;
                    }
                    catch (Exception ex) when (ex is JobRejectedException { Reason: RejectionReason.StoreUnavailable } or EnqueueOutcomeUnknownException && DateTime.UtcNow < deadline)
                    {
                        // Unknown: the job may be stored; sending it again may make two jobs of one number.
                        retried[n] = ex.GetType().Name + ": " + ex.Message;
                        refusals.TryAdd(ex.GetType().Name + ": " + ex.Message, 0);
                        await Task.Delay(20);
                    }
                }
            }
        });

        await log.WaitUntilAsync(() => log.Runs.Count >= 300, "jobs to run before the move", TimeSpan.FromSeconds(60));
        int slot = await cluster.SlotOfAsync("{" + moving + "}");
        var source = await cluster.MasterOfAsync(slot);
        var other = await cluster.MasterOfAsync(await cluster.SlotOfAsync("{" + queues[1] + "}"));
        var target = cluster.Masters.First(m => m != source && m != other);
        long moveStarted = Stopwatch.GetTimestamp();
        var move = await cluster.MoveSlotAsync(slot, target, batch: 5, pauseBetweenBatches: TimeSpan.FromMilliseconds(50));
        long moveEnded = Stopwatch.GetTimestamp();
        output.WriteLine($"moved slot {slot} from {source.Port} to {target.Port}: {move.Keys} keys in {move.Batches} batches, {move.Migrated.TotalMilliseconds:F0} ms; runs then {log.Runs.Count}");

        await producing.WaitAsync(TimeSpan.FromSeconds(120));
        await log.WaitUntilAsync(() => acknowledged.Keys.All(n => log.CallsOf(n) >= Expected(n)), "every acknowledged job to run", TimeSpan.FromSeconds(60));
        Assert.Equal(Jobs, acknowledged.Count);

        var twice = acknowledged.Keys.Where(n => log.CallsOf(n) > Expected(n)).Order().ToArray();
        output.WriteLine($"enqueues retried: {retried.Count}; refusals: {string.Join("; ", refusals.Keys)}");
        foreach (var entry in logs.Entries.Where(e => e.Level >= LogLevel.Warning).DistinctBy(e => (e.EventId.Id, e.Exception?.Message)).Take(20))
        {
            output.WriteLine($"log {entry.Level} {entry.EventId.Id}: {entry.Message} {entry.Exception?.Message}");
        }

        output.WriteLine($"run more than once: {twice.Length} ({string.Join(", ", twice.Take(20))})");
        output.WriteLine($"longest gap between job starts around the move: {LongestGap(starts, moveStarted, moveEnded):F0} ms; between acknowledged enqueues: {LongestGap(acks, moveStarted, moveEnded):F0} ms");
        Assert.All(twice, n => Assert.True(retried.ContainsKey(n), $"job {n} ran {log.CallsOf(n)} times though its enqueue was acknowledged once"));

        await using var direct = await ConnectionMultiplexer.ConnectAsync(cluster.Configuration);
        await Eventually.HoldsAsync(
            async () => (await direct.GetDatabase().StreamPendingAsync($"{prefix}:{{{moving}}}:stream", "workers")).PendingMessageCount == 0,
            "no entry left pending after the move");
        Assert.Same(target, await cluster.MasterOfAsync(slot));
        Assert.Equal(JobState.Scheduled, (await queue.GetJobAsync(later))!.State);
        int ticksAfter = ticks.Runs.Count;
        await ticks.WaitUntilAsync(r => r.Count >= ticksAfter + 2, "the recurring jobs to run after the move");
        var health = host.Services.GetRequiredService<HealthCheckService>();
        await Eventually.HoldsAsync(async () => (await health.CheckHealthAsync()).Status == HealthStatus.Healthy, "readiness after the move");
    }

    /// <summary>Every seventh job of the slot-move test fails its first attempt, so retries are in flight during the move.</summary>
    private static bool FailsFirst(int n) => n % 7 == 0;

    /// <summary>How many runs job <paramref name="n"/> takes when nothing runs twice.</summary>
    private static int Expected(int n) => FailsFirst(n) ? 2 : 1;

    /// <summary>The longest gap, in ms, between consecutive timestamps from a little before <paramref name="from"/> to a little after <paramref name="to"/>.</summary>
    internal static double LongestGap(IEnumerable<long> timestamps, long from, long to)
    {
        long margin = Stopwatch.Frequency;
        long[] window = [.. timestamps.Where(t => t >= from - margin && t <= to + margin).Order()];
        double longest = 0;
        for (int i = 1; i < window.Length; i++)
        {
            longest = Math.Max(longest, Stopwatch.GetElapsedTime(window[i - 1], window[i]).TotalMilliseconds);
        }

        return longest;
    }

    /// <summary>Queue names (<c>c0</c>, <c>c1</c>, ...) whose hash tags' slots are on <paramref name="count"/> different masters; asserts they are.</summary>
    internal static async Task<string[]> QueuesOnDifferentMastersAsync(RedisCluster cluster, int count)
    {
        var chosen = new Dictionary<int, string>();
        for (int i = 0; chosen.Count < count && i < 100; i++)
        {
            string name = "c" + i;
            var master = await cluster.MasterOfAsync(await cluster.SlotOfAsync("{" + name + "}"));
            chosen.TryAdd(master.Port, name);
        }

        Assert.Equal(count, chosen.Count);
        return [.. chosen.Values];
    }

    private static Task<DurableTestHost> StartAsync(RedisCluster cluster, JobLog log, DurableRecurringTests.OccurrenceLog ticks, string prefix, string[] queues, bool recurring, Action<WorkQueueOptions>? configure = null, LogCapture? logs = null) =>
        DurableTestHost.StartAsync(
            cluster.Configuration,
            "a",
            workQueue =>
            {
                foreach (string name in queues)
                {
                    workQueue.AddDurableQueue(name, DurableTestHost.Engine(configure), DurableTestHost.Durable(prefix));
                }

                workQueue.AddJobType<TestJobHandler, TestJob>().AddJobType<DurableRecurringTests.TickHandler, RecurringOccurrence>("tick");
                if (recurring)
                {
                    foreach (string name in queues)
                    {
                        workQueue.AddRecurringJob<DurableRecurringTests.TickHandler>("tick-" + name, "* * * * * *", o => o.Queue = name);
                    }
                }
            },
            b => b.Services.AddSingleton(log).AddSingleton(ticks),
            logs);
}
