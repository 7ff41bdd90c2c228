using System.Collections.Concurrent;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Issue 29's proof of a shared durable queue: thirty job types on one queue, two hosts consuming it, 30,000 jobs on a
/// real redis-server. Each job runs once, with its own type's handler; status, cancel and search answer per type.
/// </summary>
public sealed class DurableManyJobTypesTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const string Queue = "shared";
    private const int JobsPerType = 1_000;
    private static readonly TimeSpan RunTimeout = TimeSpan.FromMinutes(3);

    /// <summary>The thirty job types: one generic handler closed over thirty marker types, each registered under its own name.</summary>
    private static readonly IJobKind[] Kinds =
    [
        new JobKind<K01>(1), new JobKind<K02>(2), new JobKind<K03>(3), new JobKind<K04>(4), new JobKind<K05>(5),
        new JobKind<K06>(6), new JobKind<K07>(7), new JobKind<K08>(8), new JobKind<K09>(9), new JobKind<K10>(10),
        new JobKind<K11>(11), new JobKind<K12>(12), new JobKind<K13>(13), new JobKind<K14>(14), new JobKind<K15>(15),
        new JobKind<K16>(16), new JobKind<K17>(17), new JobKind<K18>(18), new JobKind<K19>(19), new JobKind<K20>(20),
        new JobKind<K21>(21), new JobKind<K22>(22), new JobKind<K23>(23), new JobKind<K24>(24), new JobKind<K25>(25),
        new JobKind<K26>(26), new JobKind<K27>(27), new JobKind<K28>(28), new JobKind<K29>(29), new JobKind<K30>(30),
    ];

    [Fact]
    public async Task ThirtyJobTypesTwoHosts_ThirtyThousandJobs_EachRunsOnceByItsType_StatusCancelAndSearchByType()
    {
        int total = Kinds.Length * JobsPerType;
        var log = new KindLog(total);
        string prefix = DurableTestHost.NewPrefix();
        await using var a = await StartAsync(log, prefix, "a");
        await using var b = await StartAsync(log, prefix, "b");
        var queue = a.Services.GetRequiredKeyedService<IWorkQueue>(Queue);

        // One producer per type, all at once: 30,000 enqueues, each job naming its type and its number.
        var ids = new string[Kinds.Length][];
        await Task.WhenAll(Kinds.Select((kind, k) => Task.Run(async () =>
        {
            ids[k] = new string[JobsPerType];
            for (int n = 0; n < JobsPerType; n++)
            {
                ids[k][n] = (await kind.EnqueueAsync(queue, new KindJob(kind.Number, n))).JobId;
            }
        })));

        await log.AllRan.WaitAsync(RunTimeout);
        Assert.Equal(total, log.Distinct);
        Assert.Empty(log.Repeated);      // no host was killed, so nothing ran twice
        Assert.Empty(log.WrongHandler);  // every job ran with the handler of the type it named
        Assert.Equal(2, log.Instances.Count);   // both hosts took part

        // Status by id names each job's type; a search by type finds only that type's jobs.
        for (int k = 0; k < Kinds.Length; k++)
        {
            var job = await queue.GetJobAsync(ids[k][^1]);
            Assert.Equal((JobState.Succeeded, Kinds[k].Name), (job!.State, job.Name));
        }

        var kind7 = Kinds[6];
        var found = new List<JobStatus>();
        string? cursor = null;
        do
        {
            var page = await queue.FindJobsAsync(new JobQuery { NameContains = kind7.Name, States = [JobState.Succeeded], Limit = 500, Cursor = cursor });
            found.AddRange(page.Jobs);
            cursor = page.Next;
        }
        while (cursor is not null);

        Assert.All(found, j => Assert.Equal(kind7.Name, j.Name));
        Assert.Equal(ids[6].Order(StringComparer.Ordinal), found.Select(j => j.Id).Order(StringComparer.Ordinal));

        // Scheduled jobs of every type: cancel one type's, the others stay scheduled under their own names.
        var scheduled = new List<string>();
        foreach (var kind in Kinds)
        {
            scheduled.Add(await kind.ScheduleAsync(queue, new KindJob(kind.Number, JobsPerType), TimeSpan.FromHours(1)));
        }

        Assert.Equal(JobCancelOutcome.Canceled, (await queue.CancelAsync(scheduled[6])).Outcome);
        var canceled = await queue.GetJobAsync(scheduled[6]);
        Assert.Equal((JobState.Canceled, kind7.Name), (canceled!.State, canceled.Name));
        var stillScheduled = await queue.FindJobsAsync(new JobQuery { States = [JobState.Scheduled], Limit = 100 });
        Assert.Equal(
            Kinds.Where(k => k != kind7).Select(k => k.Name).Order(StringComparer.Ordinal),
            stillScheduled.Jobs.Select(j => j.Name).Order(StringComparer.Ordinal));
        Assert.Empty((await queue.FindJobsAsync(new JobQuery { NameContains = kind7.Name, States = [JobState.Scheduled] })).Jobs);
    }

    private Task<DurableTestHost> StartAsync(KindLog log, string prefix, string instance) =>
        DurableTestHost.StartAsync(
            redis.Server.Configuration,
            instance,
            workQueue =>
            {
                workQueue.AddDurableQueue(
                    Queue,
                    o =>
                    {
                        o.MinWorkers = 8;
                        o.MaxWorkers = 8;
                        o.Capacity = 100_000;
                        o.MaxFinishedJobs = 100_000;   // every job's record stays readable for the checks after the run
                    },
                    d =>
                    {
                        d.KeyPrefix = prefix;
                        d.Prefetch = 32;   // with jobs that take a moment, neither host can hold the whole backlog: both run jobs
                    });
                foreach (var kind in Kinds)
                {
                    kind.Register(workQueue);
                }
            },
            builder => builder.Services.AddSingleton(log));

    public sealed record KindJob(int Kind, int N);

    /// <summary>What the handlers ran, by type and number, and on which host.</summary>
    public sealed class KindLog(int expected)
    {
        private readonly ConcurrentDictionary<(int Kind, int N), int> _runs = new();
        private readonly ConcurrentQueue<string> _wrongHandler = new();
        private readonly TaskCompletionSource _allRan = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _distinct;

        public Task AllRan => _allRan.Task;

        public int Distinct => Volatile.Read(ref _distinct);

        public ConcurrentDictionary<string, bool> Instances { get; } = new();

        public IReadOnlyList<(int Kind, int N)> Repeated => [.. _runs.Where(r => r.Value > 1).Select(r => r.Key)];

        public IReadOnlyList<string> WrongHandler => [.. _wrongHandler];

        public void Add(KindJob job, int handlerKind, string instance)
        {
            Instances.TryAdd(instance, true);
            if (job.Kind != handlerKind)
            {
                _wrongHandler.Enqueue($"job {job.Kind}/{job.N} ran with the handler of type {handlerKind}");
            }

            if (_runs.AddOrUpdate((job.Kind, job.N), 1, static (_, c) => c + 1) == 1 && Interlocked.Increment(ref _distinct) == expected)
            {
                _allRan.TrySetResult();
            }
        }
    }

    public sealed class KindHandler<TMarker>(KindLog log, InstanceName instance) : IJobHandler<KindJob>
        where TMarker : IMarker
    {
        public async ValueTask ExecuteAsync(KindJob payload, CancellationToken cancellationToken)
        {
            await Task.Delay(1, cancellationToken);
            log.Add(payload, TMarker.Number, instance.Value);
        }
    }

    /// <summary>Closes the generic calls of one job type: its registration, enqueue and schedule.</summary>
    private interface IJobKind
    {
        int Number { get; }

        string Name { get; }

        void Register(IWorkQueueBuilder builder);

        ValueTask<EnqueueResult> EnqueueAsync(IWorkQueue queue, KindJob job);

        ValueTask<string> ScheduleAsync(IWorkQueue queue, KindJob job, TimeSpan delay);
    }

    private sealed class JobKind<TMarker>(int number) : IJobKind
        where TMarker : IMarker
    {
        public int Number => number;

        public string Name => $"kind-{number:00}";

        public void Register(IWorkQueueBuilder builder) => builder.AddJobType<KindHandler<TMarker>, KindJob>(Name);

        public ValueTask<EnqueueResult> EnqueueAsync(IWorkQueue queue, KindJob job) =>
            queue.EnqueueAsync<KindHandler<TMarker>, KindJob>(job, new JobOptions());

        public ValueTask<string> ScheduleAsync(IWorkQueue queue, KindJob job, TimeSpan delay) =>
            queue.ScheduleAsync<KindHandler<TMarker>, KindJob>(job, delay);
    }

    public interface IMarker
    {
        static abstract int Number { get; }
    }

#pragma warning disable SA1402, SA1649 // thirty one-line marker types, kept together
    public sealed class K01 : IMarker { public static int Number => 1; }
    public sealed class K02 : IMarker { public static int Number => 2; }
    public sealed class K03 : IMarker { public static int Number => 3; }
    public sealed class K04 : IMarker { public static int Number => 4; }
    public sealed class K05 : IMarker { public static int Number => 5; }
    public sealed class K06 : IMarker { public static int Number => 6; }
    public sealed class K07 : IMarker { public static int Number => 7; }
    public sealed class K08 : IMarker { public static int Number => 8; }
    public sealed class K09 : IMarker { public static int Number => 9; }
    public sealed class K10 : IMarker { public static int Number => 10; }
    public sealed class K11 : IMarker { public static int Number => 11; }
    public sealed class K12 : IMarker { public static int Number => 12; }
    public sealed class K13 : IMarker { public static int Number => 13; }
    public sealed class K14 : IMarker { public static int Number => 14; }
    public sealed class K15 : IMarker { public static int Number => 15; }
    public sealed class K16 : IMarker { public static int Number => 16; }
    public sealed class K17 : IMarker { public static int Number => 17; }
    public sealed class K18 : IMarker { public static int Number => 18; }
    public sealed class K19 : IMarker { public static int Number => 19; }
    public sealed class K20 : IMarker { public static int Number => 20; }
    public sealed class K21 : IMarker { public static int Number => 21; }
    public sealed class K22 : IMarker { public static int Number => 22; }
    public sealed class K23 : IMarker { public static int Number => 23; }
    public sealed class K24 : IMarker { public static int Number => 24; }
    public sealed class K25 : IMarker { public static int Number => 25; }
    public sealed class K26 : IMarker { public static int Number => 26; }
    public sealed class K27 : IMarker { public static int Number => 27; }
    public sealed class K28 : IMarker { public static int Number => 28; }
    public sealed class K29 : IMarker { public static int Number => 29; }
    public sealed class K30 : IMarker { public static int Number => 30; }
#pragma warning restore SA1402, SA1649
}
