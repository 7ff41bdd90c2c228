using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// The nudge a round that adds jobs publishes (see <see cref="OwnNudgeFilter"/>): the publishing consumer skips its own
/// when the same round read everything, and acts on it otherwise; every other consumer is woken by it. The poll interval
/// is 30 s throughout, so a job that starts within seconds was started by a fetch the nudge (or the round) caused.
/// </summary>
public sealed class DurableNudgeTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private static readonly TimeSpan LongPoll = TimeSpan.FromSeconds(30);

    /// <summary>Well before the poll interval: only the nudge (or the round itself) can have started the job by then.</summary>
    private static readonly TimeSpan Prompt = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task SequentialEnqueues_OnOneHost_FetchOnceAJob_TheOwnNudgeAddsNoRound()
    {
        const int Jobs = 20;
        string prefix = DurableTestHost.NewPrefix();
        var gates = Enumerable.Range(0, Jobs + 1).Select(_ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).ToArray();
        var log = new JobLog { Behavior = (job, _, _) => new ValueTask(gates[job.N].Task) };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configureDurable: d => d.PollInterval = LongPoll);
        var store = host.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single().Store;
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        Dictionary<string, long> before = [];
        for (int n = 0; n <= Jobs; n++)
        {
            if (n == 1)
            {
                // Job 0 warmed up: the subscription is made and the round script loaded.
                before = await CommandCallsAsync(client);
            }

            int job = n;
            await host.Producer.EnqueueAsync(new TestJob(job));
            await log.WaitUntilAsync(() => log.Runs.Count == job + 1, $"job {job} to start", Prompt);

            // The job's own nudge taken while it runs (before, it asked for one more fetch, which the round that
            // acknowledges the job, at the latest, made), then the job ends and its acknowledgement lands: no round of
            // this cycle is left to share with the next cycle's.
            await Wait.UntilAsync(() => store.NudgesTaken == job + 1, $"job {job}'s nudge taken");
            gates[job].SetResult();
            await log.WaitUntilAsync(() => log.Completed == job + 1, $"job {job} to end");
            await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 0, $"job {job} acknowledged");
        }

        // Before, each job's own nudge made its store fetch once more (an empty read): 2 reads a job.
        var after = await CommandCallsAsync(client);
        long reads = Delta(before, after, "xreadgroup");
        string figures = string.Create(CultureInfo.InvariantCulture, $"xreadgroup {reads}, exec {Delta(before, after, "exec")}, evalsha {Delta(before, after, "evalsha")} for {Jobs} jobs");
        Assert.True(reads >= Jobs && reads <= Jobs + (Jobs / 10), figures);
        Assert.All(Enumerable.Range(0, Jobs + 1), n => Assert.Equal(1, log.CallsOf(n)));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task JobEnqueuedOnAHostThatCannotFetchIt_StartsOnAnIdleHostAtOnce(bool prefetchFull)
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 0 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await using var a = await DurableTestHost.StartAsync(redis.Server, log, prefix, "a", OneAtATime, d =>
        {
            d.PollInterval = LongPoll;
            d.Prefetch = 1;
        });
        try
        {
            if (prefetchFull)
            {
                // Job 0 runs on A and job 1 fills its prefetch of one: A's rounds that store jobs 2-6 cannot fetch.
                await a.Producer.EnqueueAsync(new TestJob(0));
                await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 0 to start on A");
                await a.Producer.EnqueueAsync(new TestJob(1));
                await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 2, "job 1 in A's prefetch");
            }
            else
            {
                a.Control.Pause();
            }

            await using var b = await DurableTestHost.StartAsync(redis.Server, log, prefix, "b", configureDurable: d => d.PollInterval = LongPoll);

            // A job through B itself: once it ran, B has fetched (and made its next poll 30 s away) and sleeps.
            await b.Producer.EnqueueAsync(new TestJob(100));
            await log.WaitUntilAsync(() => log.Runs.Any(r => r.Job.N == 100 && r.Instance == "b"), "B's own job", Prompt);
            for (int n = 2; n <= 6; n++)
            {
                await a.Producer.EnqueueAsync(new TestJob(n));
                int job = n;
                await log.WaitUntilAsync(() => log.Runs.Any(r => r.Job.N == job), $"job {n} to start on B long before its poll", Prompt);
            }

            Assert.All(log.Runs.Where(r => r.Job.N >= 2 && r.Job.N <= 6), r => Assert.Equal("b", r.Instance));
        }
        finally
        {
            release.TrySetResult();
        }
    }

    [Fact]
    public async Task JobEnqueuedWhileItsOwnHostsPrefetchIsFull_StartsThereOnceRoomIsMade_WithoutWaitingForThePoll()
    {
        string prefix = DurableTestHost.NewPrefix();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N == 0 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: OneAtATime, configureDurable: d =>
        {
            d.PollInterval = LongPoll;
            d.Prefetch = 1;
        });
        await host.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "job 0 to start");
        await host.Producer.EnqueueAsync(new TestJob(1));
        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(stream, "workers")).PendingMessageCount == 2, "job 1 in the prefetch");

        // Stored by rounds that could not fetch (no room): their nudges count here (the full read that filled the
        // prefetch also asks for another fetch, so this guards the outcome rather than isolating the nudge; the rule
        // itself is OwnNudgeFilterTests').
        await host.Producer.EnqueueAsync(new TestJob(2));
        await host.Producer.EnqueueAsync(new TestJob(3));
        release.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 4, "jobs 1-3 once job 0 ended", Prompt);

        // A round whose read is full (more jobs than the prefetch, in one batch) leaves the rest for the next fetch.
        await Task.WhenAll(Enumerable.Range(4, 6).Select(async n => await host.Producer.EnqueueAsync(new TestJob(n))));
        await log.WaitUntilAsync(() => log.Completed == 10, "jobs 4-9", Prompt);
        Assert.All(Enumerable.Range(0, 10), n => Assert.Equal(1, log.CallsOf(n)));
    }

    [Fact]
    public async Task ManyProducersOnTwoHosts_EveryJobRunsOnce_NoneWaitsForThePoll()
    {
        const int PerProducer = 100;
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var a = await DurableTestHost.StartAsync(redis.Server, log, prefix, "a", configureDurable: d => { d.PollInterval = LongPoll; d.Prefetch = 4; });
        await using var b = await DurableTestHost.StartAsync(redis.Server, log, prefix, "b", configureDurable: d => { d.PollInterval = LongPoll; d.Prefetch = 4; });

        // Small prefetches, so rounds read full batches and find the prefetch full as often as they read short ones:
        // each host's own nudges race their rounds' replies in every order.
        var producers = new[] { a, b }.SelectMany((host, h) => Enumerable.Range(0, 4).Select(p => Task.Run(async () =>
        {
            for (int i = 0; i < PerProducer; i++)
            {
                await host.Producer.EnqueueAsync(new TestJob((((h * 4) + p) * PerProducer) + i));
            }
        }))).ToArray();
        await Task.WhenAll(producers);

        await log.WaitUntilAsync(() => log.Completed == 8 * PerProducer, "every job, long before a poll", TimeSpan.FromSeconds(20));
        Assert.All(Enumerable.Range(0, 8 * PerProducer), n => Assert.Equal(1, log.CallsOf(n)));
    }

    private static void OneAtATime(WorkQueueOptions o)
    {
        o.MaxWorkers = 1;
        o.MaxConcurrency = 1;
    }

    private static long Delta(Dictionary<string, long> before, Dictionary<string, long> after, string command) =>
        (after.TryGetValue(command, out long a) ? a : 0) - (before.TryGetValue(command, out long b) ? b : 0);

    private static async Task<Dictionary<string, long>> CommandCallsAsync(ConnectionMultiplexer client)
    {
        var info = await client.GetServer(client.GetEndPoints()[0]).InfoAsync("commandstats");
        var calls = new Dictionary<string, long>();
        foreach (var pair in info.SelectMany(g => g))
        {
            // cmdstat_xreadgroup: calls=1,usec=3,usec_per_call=3.00,...
            string first = pair.Value.Split(',')[0];
            calls[pair.Key.Replace("cmdstat_", string.Empty, StringComparison.Ordinal)] = long.Parse(first.AsSpan(first.IndexOf('=') + 1), CultureInfo.InvariantCulture);
        }

        return calls;
    }
}
