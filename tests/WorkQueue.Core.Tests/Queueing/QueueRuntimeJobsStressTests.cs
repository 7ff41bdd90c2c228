using System.Collections.Concurrent;
using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Queueing;

/// <summary>
/// Cancels by id racing the threads that start, fail, retry and finish the same jobs: queued, scheduled (coming due as
/// they are cancelled), running (some honour the token, some ignore it) and retrying jobs. Afterwards every job must
/// have ended exactly one way, counted once, no job cancelled before its start may have run, and every idempotency key
/// must be free.
/// </summary>
public sealed class QueueRuntimeJobsStressTests(ITestOutputHelper output)
{
    private const int Producers = 4;
    private const int JobsPerProducer = 500;
    private const int MaxAttempts = 2;

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    [InlineData(5)]
    [InlineData(6)]
    public async Task CancelRacingStarts_EveryJobEndsExactlyOneWayCountedOnce(int seed)
    {
        await using var harness = QueueHarness.Start(o =>
        {
            o.Capacity = Producers * JobsPerProducer;
            o.MinWorkers = 4;
            o.MaxWorkers = 4;
            o.AutoScale.Enabled = false;
            o.Retry.MaxAttempts = MaxAttempts;
            o.Retry.BaseDelay = TimeSpan.FromMilliseconds(1);
            o.Retry.MaxDelay = TimeSpan.FromMilliseconds(2);
            o.MaxFinishedJobs = Producers * JobsPerProducer;
        });
        var handler = new Handler();
        var ids = new ConcurrentQueue<string>();
        var payloadOf = new ConcurrentDictionary<string, int>();
        var requested = new ConcurrentDictionary<string, JobCancelOutcome>();
        using var producing = new CancellationTokenSource();

        var producers = Enumerable.Range(0, Producers).Select(p => Task.Run(async () =>
        {
            var random = new Random((seed * 31) + p);
            for (int i = 0; i < JobsPerProducer; i++)
            {
                int payload = (p * JobsPerProducer) + i;
                var options = new JobOptions
                {
                    IdempotencyKey = random.Next(3) == 0 ? $"key-{payload}" : null,
                    Delay = random.Next(4) == 0 ? TimeSpan.FromMilliseconds(random.Next(0, 3)) : null,
                };
                var result = await harness.Queue.EnqueueAsync(handler, payload, options);
                Assert.True(result.Created);
                payloadOf[result.JobId] = payload;
                ids.Enqueue(result.JobId);
            }
        })).ToArray();

        var cancellers = Enumerable.Range(0, 2).Select(c => Task.Run(async () =>
        {
            var random = new Random((seed * 17) + c);
            while (!producing.IsCancellationRequested || !ids.IsEmpty)
            {
                if (!ids.TryDequeue(out string? id))
                {
                    await Task.Yield();
                    continue;
                }

                // Two in three are cancelled, some at once, some after a short spin (while a thread may be starting them).
                if (random.Next(3) == 0)
                {
                    continue;
                }

                Thread.SpinWait(random.Next(0, 2_000));
                requested[id] = (await harness.Queue.CancelAsync(id)).Outcome;
            }
        })).ToArray();

        // Pauses now and then, so cancelled items pile up in the channel and are dropped in bursts on resume.
        var pauser = Task.Run(async () =>
        {
            var random = new Random(seed);
            while (!producing.IsCancellationRequested)
            {
                harness.Control.Pause();
                Thread.SpinWait(random.Next(0, 20_000));
                harness.Control.Resume();
                await Task.Delay(random.Next(1, 5));
            }
        });

        await Wait.ForAsync(Task.WhenAll(producers), "the producers");
        await Wait.UntilAsync(() => ids.IsEmpty, "the cancellers to take every id");
        producing.Cancel();
        await Wait.ForAsync(Task.WhenAll(cancellers), "the cancellers");
        await Wait.ForAsync(pauser, "the pauser");
        harness.Control.Resume();
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Unfinished == 0, "every job to end");

        var totals = harness.Control.GetSnapshot().Totals;
        int total = Producers * JobsPerProducer;
        Assert.Equal(total, payloadOf.Count);
        var statuses = new List<JobStatus>();
        foreach (string id in payloadOf.Keys)
        {
            statuses.Add(Assert.IsType<JobStatus>(await harness.Queue.GetJobAsync(id)));
        }

        Assert.Equal(total, totals.Enqueued);
        Assert.Equal(totals.Enqueued, totals.Succeeded + totals.DeadLettered + totals.Canceled);
        Assert.Equal((0L, 0L), (totals.Dropped, totals.Abandoned));

        // Every job is known and ended; the counters match the states one for one.
        var byState = statuses.GroupBy(s => s.State).ToDictionary(g => g.Key, g => (long)g.Count());
        Assert.All(statuses, s => Assert.True(s.State is JobState.Succeeded or JobState.DeadLettered or JobState.Canceled, $"job {s.Id} is {s.State}"));
        Assert.Equal(totals.Canceled, byState.GetValueOrDefault(JobState.Canceled));
        Assert.Equal(totals.Succeeded, byState.GetValueOrDefault(JobState.Succeeded));
        Assert.Equal(totals.DeadLettered, byState.GetValueOrDefault(JobState.DeadLettered));

        // Each job ran exactly as many attempts as its status says it started: none that a cancel beat ever ran.
        foreach (var status in statuses)
        {
            int runs = handler.Runs(payloadOf[status.Id]);
            Assert.True(runs == status.Attempt, $"job {status.Id} ({status.State}) ran {runs} time(s) but its status says attempt {status.Attempt}");
            Assert.True(runs <= MaxAttempts, $"job {status.Id} ran {runs} times");
            if (requested.TryGetValue(status.Id, out var outcome))
            {
                Assert.True(outcome != JobCancelOutcome.NotFound, $"job {status.Id} was not found by its cancel");
                if (outcome == JobCancelOutcome.Canceled)
                {
                    Assert.Equal(JobState.Canceled, status.State);
                }
                else if (outcome == JobCancelOutcome.CancelRequested)
                {
                    Assert.True(status.CancelRequested, $"job {status.Id}: a cancel was requested but its status does not say so");
                }
            }
        }

        Assert.Equal(totals.Started, handler.TotalRuns);
        Assert.Equal(0, harness.Runtime.Ledger.Keys!.Count);
        output.WriteLine($"seed {seed}: {totals.Succeeded} succeeded, {totals.DeadLettered} dead-lettered, {totals.Canceled} cancelled ({requested.Values.Count(o => o == JobCancelOutcome.CancelRequested)} while running), {totals.Retried} retried");
    }

    /// <summary>Even payloads honour their token; odd ones ignore it. One in five fails its first attempt.</summary>
    private sealed class Handler : IJobHandler<int>
    {
        private readonly ConcurrentDictionary<int, int> _attemptsByPayload = new();
        private int _totalRuns;

        public int TotalRuns => Volatile.Read(ref _totalRuns);

        public int Runs(int payload) => _attemptsByPayload.GetValueOrDefault(payload);

        public ValueTask ExecuteAsync(int payload, CancellationToken cancellationToken)
        {
            // A handler is not given its job's id; each payload is enqueued once, so runs are counted by payload.
            int attempt = _attemptsByPayload.AddOrUpdate(payload, 1, static (_, n) => n + 1);
            Interlocked.Increment(ref _totalRuns);

            // Long enough (tens of microseconds) for cancels to land while jobs run.
            for (int i = 0; i < 10; i++)
            {
                Thread.SpinWait(1_000);
                if (payload % 2 == 0)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                }
            }

            if (payload % 5 == 0 && attempt == 1)
            {
                throw new InvalidOperationException("first attempt fails");
            }

            return ValueTask.CompletedTask;
        }
    }
}
