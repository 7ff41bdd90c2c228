using System.Collections.Concurrent;
using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Queueing;

/// <summary>
/// Many producers, resizing and pausing while jobs run, a mix of synchronous, blocking, async (yielding and awaiting
/// timers) and sync-over-async jobs, some throwing with retries, with and without a concurrency limit above the thread
/// count, and a shutdown that either drains or abandons: afterwards every accepted job must be accounted for exactly
/// once, no rejected job may ever run, and the concurrency limit was never exceeded.
/// </summary>
public sealed class DefaultWorkQueueStressTests(ITestOutputHelper output)
{
    private const int Producers = 8;
    private const int JobsPerProducer = 500;

    /// <summary>Gets sixteen seeds from 0, or from the number in <c>WORKQUEUE_STRESS_SEED_BASE</c> (to run other seeds in a loop).</summary>
    public static TheoryData<int> Seeds()
    {
        int first = int.TryParse(Environment.GetEnvironmentVariable("WORKQUEUE_STRESS_SEED_BASE"), out int configured) ? configured : 0;
        var data = new TheoryData<int>();
        for (int seed = first; seed < first + 16; seed++)
        {
            data.Add(seed);
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Seeds))]
    public async Task ManyProducers_ResizingThrowingAndStopping_EveryAcceptedJobAccountedOnce(int seed)
    {
        var fullMode = (QueueFullMode)(seed % 3);
        bool abandon = seed % 2 == 1;
        int? maxConcurrency = seed % 4 == 3 ? 32 : null;
        var outcomes = new Outcomes();
        await using var harness = QueueHarness.Start(o =>
        {
            o.Capacity = 64;
            o.FullMode = fullMode;
            o.MinWorkers = 1;
            o.MaxWorkers = 8;
            o.IdleTimeout = TimeSpan.FromMilliseconds(5);
            o.AutoScale.TargetQueueWait = TimeSpan.FromMilliseconds(1);
            o.AutoScale.ScaleUpCooldown = TimeSpan.Zero;
            o.AutoScale.SampleInterval = TimeSpan.FromMilliseconds(10);
            o.Retry.MaxAttempts = 2;
            o.Retry.BaseDelay = TimeSpan.FromMilliseconds(1);
            o.Retry.MaxDelay = TimeSpan.FromMilliseconds(2);
            o.ShutdownGracePeriod = TimeSpan.FromSeconds(10);
            o.SpinBeforeParking = seed % 4 < 2;
            o.MaxConcurrency = maxConcurrency;
            o.OnJobDropped = job => outcomes.Record(outcomes.Dropped, ((StressJob)job.Payload!).Id);
            o.OnJobDeadLettered = dead => outcomes.Record(outcomes.DeadLettered, ((StressJob)dead.Job.Payload!).Id);
        });
        var queue = harness.Queue;
        var control = harness.Control;
        var handler = new StressHandler(outcomes);
        using var producing = new CancellationTokenSource();
        var halfway = new CountdownSignal(Producers * JobsPerProducer / 2);

        var resizer = Task.Run(async () =>
        {
            var random = new Random(seed);
            while (!producing.IsCancellationRequested)
            {
                switch (random.Next(4))
                {
                    case 0: control.SetWorkerCount(random.Next(1, 9)); break;
                    case 1: control.UseAutoScaling(); break;
                    case 2: control.Pause(); await Task.Yield(); control.Resume(); break;
                    default: await Task.Delay(1); break;
                }
            }

            control.Resume();
        });

        var producers = Enumerable.Range(0, Producers).Select(p => Task.Run(async () =>
        {
            var random = new Random(seed * 100 + p);
            for (int i = 0; i < JobsPerProducer; i++)
            {
                var job = new StressJob(p * JobsPerProducer + i, Fail: random.Next(10) == 0, Kind: (JobKind)random.Next(5));
                bool accepted;
                if (random.Next(2) == 0)
                {
                    accepted = queue.TryEnqueue(handler, job);
                }
                else
                {
                    try
                    {
                        using var timeout = new CancellationTokenSource(TimeSpan.FromMilliseconds(random.Next(1, 20)));
                        await queue.EnqueueAsync(handler, job, timeout.Token);
                        accepted = true;
                    }
                    catch (JobRejectedException)
                    {
                        accepted = false;
                    }
                    catch (OperationCanceledException)
                    {
                        accepted = false;
                    }
                }

                (accepted ? outcomes.Accepted : outcomes.Rejected).TryAdd(job.Id, 0);
                halfway.Signal();
            }
        })).ToArray();

        // Abandoning seeds stop mid-production, racing the producers while the queue is full; draining seeds stop after.
        ShutdownReport report;
        if (abandon)
        {
            await Wait.ForAsync(halfway.Task, "half the jobs to be offered");
            report = await Wait.ForAsync(control.StopAsync(TimeSpan.Zero), "the stop");
            await Wait.ForAsync(Task.WhenAll(producers), "the producers");
        }
        else
        {
            await Wait.ForAsync(Task.WhenAll(producers), "the producers");
            report = await Wait.ForAsync(control.StopAsync(Wait.Generous), "the stop");
        }

        producing.Cancel();
        await Wait.ForAsync(resizer, "the resizer");
        foreach (var abandoned in report.Abandoned)
        {
            outcomes.Record(outcomes.Abandoned, ((StressJob)abandoned.Job.Payload!).Id);
        }

        var totals = control.GetSnapshot().Totals;
        output.WriteLine($"seed {seed} ({fullMode}, {(abandon ? "abandon" : "drain")}, concurrency {maxConcurrency?.ToString() ?? "per thread"}, at most {outcomes.MaxRunning} at once): {totals}");
        if (maxConcurrency is { } limit)
        {
            Assert.True(outcomes.MaxRunning <= limit, $"seed {seed}: {outcomes.MaxRunning} jobs ran at once, above the limit of {limit}");
        }

        foreach (var id in outcomes.Rejected.Keys)
        {
            int endings = outcomes.Count(outcomes.Succeeded, id) + outcomes.Count(outcomes.DeadLettered, id) + outcomes.Count(outcomes.Dropped, id) + outcomes.Count(outcomes.Abandoned, id);
            if (endings != 0 || outcomes.Count(outcomes.Runs, id) != 0)
            {
                output.WriteLine($"DIAG rejected job {id} ran {outcomes.Count(outcomes.Runs, id)} ended {endings} (abandoned {outcomes.Count(outcomes.Abandoned, id)})");
            }
        }
        Assert.Equal(0, totals.Unfinished);
        Assert.Equal(outcomes.Accepted.Count, totals.Enqueued);
        Assert.Equal(outcomes.Rejected.Count, totals.Rejected);
        Assert.Equal(Producers * JobsPerProducer, totals.Enqueued + totals.Rejected);
        Assert.Equal(totals.Enqueued, totals.Succeeded + totals.DeadLettered + totals.Dropped + totals.Abandoned);
        if (!abandon)
        {
            Assert.True(totals.Succeeded > 0, $"seed {seed}: no job succeeded, so the run proves nothing");
            Assert.True(report.Drained);
            Assert.Empty(report.Abandoned);
        }

        foreach (var id in outcomes.Accepted.Keys)
        {
            int endings = outcomes.Count(outcomes.Succeeded, id) + outcomes.Count(outcomes.DeadLettered, id)
                + outcomes.Count(outcomes.Dropped, id) + outcomes.Count(outcomes.Abandoned, id);
            Assert.True(endings == 1, $"seed {seed}: accepted job {id} ended {endings} times");
        }

        foreach (var id in outcomes.Rejected.Keys)
        {
            Assert.True(outcomes.Count(outcomes.Runs, id) == 0, $"seed {seed}: rejected job {id} ran");
        }
    }

    private enum JobKind
    {
        Sync,
        Yielding,
        Blocking,
        AwaitingTimer,
        SyncOverAsync,
    }

    private sealed record StressJob(int Id, bool Fail, JobKind Kind);

    private sealed class Outcomes
    {
        private int _running;
        private int _maxRunning;

        public ConcurrentDictionary<int, byte> Accepted { get; } = new();

        public ConcurrentDictionary<int, byte> Rejected { get; } = new();

        public ConcurrentDictionary<int, int> Runs { get; } = new();

        public ConcurrentDictionary<int, int> Succeeded { get; } = new();

        public ConcurrentDictionary<int, int> DeadLettered { get; } = new();

        public ConcurrentDictionary<int, int> Dropped { get; } = new();

        public ConcurrentDictionary<int, int> Abandoned { get; } = new();

        public int MaxRunning => Volatile.Read(ref _maxRunning);

        public void Record(ConcurrentDictionary<int, int> outcome, int id) => outcome.AddOrUpdate(id, 1, (_, n) => n + 1);

        public void Enter()
        {
            int now = Interlocked.Increment(ref _running);
            int max;
            while (now > (max = Volatile.Read(ref _maxRunning)) && Interlocked.CompareExchange(ref _maxRunning, now, max) != max)
            {
            }
        }

        public void Exit() => Interlocked.Decrement(ref _running);

        public int Count(ConcurrentDictionary<int, int> outcome, int id) => outcome.GetValueOrDefault(id);
    }

    private sealed class StressHandler(Outcomes outcomes) : IJobHandler<StressJob>
    {
        public async ValueTask ExecuteAsync(StressJob payload, CancellationToken cancellationToken)
        {
            outcomes.Record(outcomes.Runs, payload.Id);
            outcomes.Enter();
            try
            {
                switch (payload.Kind)
                {
                    case JobKind.Yielding:
                        await Task.Yield();
                        break;
                    case JobKind.Blocking:
                        Thread.Sleep(1);
                        break;
                    case JobKind.AwaitingTimer:
                        await Task.Delay(1, CancellationToken.None);
                        break;
                    case JobKind.SyncOverAsync:
                        LegacyAsync().Wait();
                        break;
                }

                if (payload.Fail)
                {
                    throw new InvalidOperationException($"job {payload.Id} fails");
                }
            }
            finally
            {
                outcomes.Exit();
            }

            outcomes.Record(outcomes.Succeeded, payload.Id);
        }

        private static async Task LegacyAsync() => await Task.Delay(1);
    }
}
