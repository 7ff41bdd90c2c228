using System.Diagnostics;
using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// <see cref="DurableQueueOptions.ReplicaAcknowledgements"/> against a real primary and replica
/// (<see cref="RedisReplicationFixture"/>): an enqueue completes once the replica has the job (Redis's <c>WAIT</c>, one per
/// round of enqueues), reports <see cref="EnqueueNotReplicatedException"/> when the replica does not answer in time (and
/// the job still runs), and nothing is waited for when the option is off. The tests of this class run one at a time (the
/// fixture's replica is frozen by some of them).
/// </summary>
public sealed class DurableReplicaAcknowledgementTests(RedisReplicationFixture fixture, ITestOutputHelper output) : IClassFixture<RedisReplicationFixture>
{
    /// <summary>A connection whose timeouts allow a long WAIT (validated: at most half the shorter one), with claims to match.</summary>
    private const string LongTimeouts = ",syncTimeout=20000,asyncTimeout=20000";

    private RedisReplication Replication => fixture.Replication;

    [Fact]
    public async Task EnqueueAsync_ReplicaFrozenThenThawed_CompletesOnlyOnceTheReplicaHasTheJob()
    {
        // The job waits on the gate, so its entry stays in the stream (pending) to be read on the replica.
        var log = new JobLog();
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        log.Behavior = async (_, _, _) => await gate.Task;
        string prefix = DurableTestHost.NewPrefix();
        await using var host = await DurableTestHost.StartAsync(
            Replication.Primary,
            log,
            prefix,
            configureDurable: d =>
            {
                d.ClaimTimeout = TimeSpan.FromSeconds(60);
                d.ReplicaAcknowledgements = 1;
                d.ReplicaAcknowledgementTimeout = TimeSpan.FromSeconds(10);
            },
            connection: Replication.Primary.Configuration + LongTimeouts);
        await using var replica = await ConnectReplicaAsync();

        // Frozen, the replica cannot have the job: an enqueue that completed meanwhile would not be on it.
        bool thawed = false;
        Replication.Replica.Pause();
        Task<string> enqueue;
        try
        {
            enqueue = host.Producer.EnqueueAsync(new TestJob(1)).AsTask();

            // Time for the enqueue to reach Redis; the test holds whether or not it has.
            await Task.Delay(300);
            Assert.False(enqueue.IsCompleted, "The enqueue completed while the replica was frozen, so the replica cannot have had the job.");
        }
        finally
        {
            Volatile.Write(ref thawed, true);
            Replication.Replica.Resume();
        }

        string id = await Wait.ForAsync(enqueue, "the enqueue, once the replica was thawed");
        Assert.True(Volatile.Read(ref thawed));
        var entries = await replica.GetDatabase().StreamRangeAsync(DurableTestHost.StreamKey(prefix), id, id, flags: CommandFlags.DemandReplica);
        Assert.Equal(id, Assert.Single(entries).Id.ToString());
        gate.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 1, "job 1");
        await Replication.WaitForLinksAsync();
    }

    [Fact]
    public async Task EnqueueAsync_ReplicaAcknowledgementsOn_EachCompletedEnqueueIsOnTheReplica_OneWaitPerRound_NoneForSettles()
    {
        var log = new JobLog();
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        log.Behavior = async (_, _, _) => await gate.Task;
        string prefix = DurableTestHost.NewPrefix();
        await Replication.Primary.CommandAsync("CONFIG", "RESETSTAT");
        await using var host = await DurableTestHost.StartAsync(
            Replication.Primary,
            log,
            prefix,
            configure: o => o.Capacity = 10_000,
            configureDurable: d =>
            {
                d.ReplicaAcknowledgements = 1;
                d.ReplicaAcknowledgementTimeout = TimeSpan.FromSeconds(2);
            });
        await using var replica = await ConnectReplicaAsync();
        var replicaDb = replica.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);

        // The job is pending (its handler waits on the gate), so its entry stays in the stream to be read on the replica.
        const int Jobs = 400;
        int missing = 0;
        await Task.WhenAll(Enumerable.Range(0, Jobs).Select(async n =>
        {
            string id = await host.Producer.EnqueueAsync(new TestJob(n));
            var entries = await replicaDb.StreamRangeAsync(stream, id, id, flags: CommandFlags.DemandReplica);
            if (entries.Length != 1)
            {
                Interlocked.Increment(ref missing);
            }
        }));
        Assert.Equal(0, missing);

        long waits = await CallsAsync("wait");
        long scripts = await CallsAsync("evalsha") + await CallsAsync("eval");
        output.WriteLine($"{Jobs} enqueues: {waits} WAIT, {scripts} script calls");
        Assert.InRange(waits, 1, Jobs / 2);

        // Acknowledgements (and the fetches and heartbeats meanwhile) send no WAIT.
        gate.SetResult();
        await log.WaitUntilAsync(() => log.Completed == Jobs, "every job", TimeSpan.FromSeconds(60));
        await using var primary = await DurableTestHost.ConnectAsync(Replication.Primary);
        await Eventually.HoldsAsync(async () => await primary.GetDatabase().StreamLengthAsync(stream) == 0, "every acknowledgement to land (the stream trimmed empty)");
        Assert.Equal(waits, await CallsAsync("wait"));
    }

    [Fact]
    public async Task EnqueueAsync_RoundRefusedAndReplicaFrozen_StoreUnavailable_AndNoWarningThatJobsAreOnThePrimary()
    {
        // A round whose enqueues Redis refused (out of memory here; READONLY from a demoted primary in a failover) and
        // whose WAIT then counts no replica: nothing was stored, so warning 523 ("its jobs are stored on the primary")
        // must not be logged, and the producer hears StoreUnavailable, not EnqueueNotReplicatedException.
        using var logs = new LogCapture();
        await using var host = await DurableTestHost.StartAsync(
            Replication.Primary,
            new JobLog(),
            DurableTestHost.NewPrefix(),
            configureDurable: d =>
            {
                d.ReplicaAcknowledgements = 1;
                d.ReplicaAcknowledgementTimeout = TimeSpan.FromMilliseconds(300);
            },
            logs: logs);
        await using var primary = await DurableTestHost.ConnectAsync(Replication.Primary);
        var server = primary.GetServer(primary.GetEndPoints().Single());
        await server.ConfigSetAsync("maxmemory", "1");
        Replication.Replica.Pause();
        JobRejectedException refused;
        try
        {
            refused = await Wait.ForAsync(Assert.ThrowsAsync<JobRejectedException>(async () => await host.Producer.EnqueueAsync(new TestJob(1))), "the enqueue's answer");
        }
        finally
        {
            Replication.Replica.Resume();
            await server.ConfigSetAsync("maxmemory", "0");
        }

        Assert.Equal(RejectionReason.StoreUnavailable, refused.Reason);   // ThrowsAsync took exactly JobRejectedException
        Assert.DoesNotContain(logs.Entries, e => e.EventId.Id == 523);
    }

    [Fact]
    public async Task EnqueueAsync_ReplicaFrozen_ThrowsNotReplicatedWithTheJobsId_AndTheJobStillRuns()
    {
        var log = new JobLog();
        var keyedGate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        log.Behavior = async (job, _, _) =>
        {
            if (job.N == 2)
            {
                await keyedGate.Task;
            }
        };
        string prefix = DurableTestHost.NewPrefix();
        await using var host = await DurableTestHost.StartAsync(
            Replication.Primary,
            log,
            prefix,
            configureDurable: d =>
            {
                d.ReplicaAcknowledgements = 1;
                d.ReplicaAcknowledgementTimeout = TimeSpan.FromMilliseconds(300);
            });
        EnqueueNotReplicatedException plain;
        EnqueueNotReplicatedException keyed;
        Replication.Replica.Pause();
        try
        {
            var watch = Stopwatch.StartNew();
            plain = await Wait.ForAsync(Assert.ThrowsAsync<EnqueueNotReplicatedException>(async () => await host.Producer.EnqueueAsync(new TestJob(1))), "the enqueue's answer");
            output.WriteLine($"EnqueueNotReplicatedException after {watch.ElapsedMilliseconds} ms (timeout 300 ms): {plain.Message}");
            keyed = await Wait.ForAsync(Assert.ThrowsAsync<EnqueueNotReplicatedException>(async () => await host.Producer.EnqueueAsync(new TestJob(2), new JobOptions { IdempotencyKey = "k2" })), "the keyed enqueue's answer");

            // Stored on the primary, and run (job 1 acknowledged, its entry trimmed), though the replica has not got them.
            await log.WaitUntilAsync(() => log.Completed == 1 && log.Runs.Count == 2, "job 1 to run and job 2 to start while the replica is frozen");
        }
        finally
        {
            Replication.Replica.Resume();
        }

        Assert.Equal(DurableTestHost.Queue, plain.QueueName);
        Assert.Equal(1, plain.ReplicasRequired);
        Assert.Equal(0, plain.ReplicasAcknowledged);
        Assert.Contains("ReplicaAcknowledgementTimeout", plain.Message);
        Assert.Equal(1, log.CallsOf(1));
        Assert.Equal(JobState.Succeeded, (await host.Producer.GetJobAsync(plain.JobId))?.State);

        // Thawed: the keyed enqueue repeated stores nothing (its job lives) and completes, the replica now confirming
        // what the primary wrote before, the first job included.
        var again = await Wait.ForAsync(host.Producer.EnqueueAsync(new TestJob(2), new JobOptions { IdempotencyKey = "k2" }).AsTask(), "the keyed enqueue repeated");
        Assert.Equal(new EnqueueResult(keyed.JobId, Created: false), again);
        keyedGate.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 2, "job 2");
        Assert.Equal(1, log.CallsOf(2));
    }

    [Fact]
    public async Task EnqueueAsync_ReplicaAcknowledgementsOff_SendsNoWait()
    {
        var log = new JobLog();
        await Replication.Primary.CommandAsync("CONFIG", "RESETSTAT");
        await using var host = await DurableTestHost.StartAsync(Replication.Primary, log, DurableTestHost.NewPrefix());
        await Task.WhenAll(Enumerable.Range(0, 50).Select(async n => await host.Producer.EnqueueAsync(new TestJob(n))));
        await log.WaitUntilAsync(() => log.Completed == 50, "every job");

        Assert.True(await CallsAsync("evalsha") + await CallsAsync("eval") > 0, "The queue's rounds ran on this primary.");
        Assert.Equal(0, await CallsAsync("wait"));
    }

    [Fact]
    public void AddDurableQueue_ReplicaAcknowledgementTimeoutOverHalfTheConnectionsTimeout_IsRefusedNamingEachSetting()
    {
        var host = DurableTestHost.Build(
            Replication.Primary,
            new JobLog(),
            DurableTestHost.NewPrefix(),
            configureDurable: d =>
            {
                d.ReplicaAcknowledgements = 1;
                d.ReplicaAcknowledgementTimeout = TimeSpan.FromMilliseconds(1500);
            },
            connection: $"{Replication.Primary.Configuration},syncTimeout=2000,asyncTimeout=5000");
        var error = Assert.Throws<OptionsValidationException>(() => host.Services.GetRequiredService<IOptionsMonitor<DurableQueueOptions>>().Get(DurableTestHost.Queue));
        Assert.Contains("ReplicaAcknowledgementTimeout (00:00:01.5000000)", error.Message);
        Assert.Contains("SyncTimeout (2000 ms)", error.Message);
    }

    [Fact]
    public void AddDurableQueue_ReplicaAcknowledgementTimeoutOverHalfTheConnectionsTimeout_IsAcceptedWhenOff()
    {
        var host = DurableTestHost.Build(
            Replication.Primary,
            new JobLog(),
            DurableTestHost.NewPrefix(),
            configureDurable: d => d.ReplicaAcknowledgementTimeout = TimeSpan.FromMilliseconds(1500),
            connection: $"{Replication.Primary.Configuration},syncTimeout=2000,asyncTimeout=5000");
        Assert.Equal(0, host.Services.GetRequiredService<IOptionsMonitor<DurableQueueOptions>>().Get(DurableTestHost.Queue).ReplicaAcknowledgements);
    }

    [Theory]
    [InlineData(-1, 1000, "ReplicaAcknowledgements")]
    [InlineData(101, 1000, "ReplicaAcknowledgements")]
    [InlineData(1, 0, "ReplicaAcknowledgementTimeout")]
    [InlineData(1, 61_000, "ReplicaAcknowledgementTimeout")]
    public void AddDurableQueue_ReplicaAcknowledgementsOutOfRange_IsRefusedNamingTheSetting(int replicas, int timeoutMs, string setting)
    {
        var host = DurableTestHost.Build(
            Replication.Primary,
            new JobLog(),
            DurableTestHost.NewPrefix(),
            configureDurable: d =>
            {
                d.ClaimTimeout = TimeSpan.FromDays(1);
                d.ReplicaAcknowledgements = replicas;
                d.ReplicaAcknowledgementTimeout = TimeSpan.FromMilliseconds(timeoutMs);
            },
            connection: $"{Replication.Primary.Configuration},syncTimeout=200000,asyncTimeout=200000");
        var error = Assert.Throws<OptionsValidationException>(() => host.Services.GetRequiredService<IOptionsMonitor<DurableQueueOptions>>().Get(DurableTestHost.Queue));
        Assert.Contains(setting, error.Message);
    }

    /// <summary>A connection to the replica alone, whose reads are sent to it (<see cref="CommandFlags.DemandReplica"/>).</summary>
    private Task<ConnectionMultiplexer> ConnectReplicaAsync() =>
        ConnectionMultiplexer.ConnectAsync(Replication.Replica.Configuration);

    /// <summary>How many times the primary ran <paramref name="command"/> since its stats were reset (<c>INFO commandstats</c>).</summary>
    private async Task<long> CallsAsync(string command)
    {
        // cmdstat_wait:calls=12,usec=...,usec_per_call=...
        string? stats = await Replication.Primary.InfoFieldAsync("commandstats", "cmdstat_" + command);
        if (stats is null)
        {
            return 0;
        }

        string calls = stats.Split(',')[0];
        return long.Parse(calls["calls=".Length..], CultureInfo.InvariantCulture);
    }
}
