using System.Collections.Concurrent;
using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Accounting;

/// <summary>
/// Idempotency keys under many producers on the real engine clock, with jobs that throw and are retried, and a stop in
/// the middle: never two unfinished jobs with one key, every added job ends once, and every key is free at the end.
/// </summary>
public sealed class IdempotencyKeyStressTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public async Task ManyProducersFewKeys_NeverTwoUnfinishedJobsPerKey(int seed)
    {
        var harness = QueueHarness.Start(o => { o.MinWorkers = 2; o.MaxWorkers = 4; o.Retry.MaxAttempts = 2; o.Retry.BaseDelay = TimeSpan.FromMilliseconds(1); });
        var handler = new OverlapHandler(seed);
        var created = new ConcurrentDictionary<string, string>();
        long deduplicated = 0;
        long attempts = 0;
        using var stop = new CancellationTokenSource();
        var producers = Enumerable.Range(0, 8).Select(p => Task.Run(async () =>
        {
            var random = new Random((seed * 100) + p);
            for (int i = 0; i < 3_000; i++)
            {
                string key = "k" + random.Next(16);
                Interlocked.Increment(ref attempts);
                try
                {
                    var result = await harness.Queue.EnqueueAsync(handler, key, new JobOptions { IdempotencyKey = key, Delay = random.Next(4) == 0 ? TimeSpan.FromMilliseconds(random.Next(5)) : null });
                    if (result.Created)
                    {
                        Assert.True(created.TryAdd(result.JobId, key), $"job id {result.JobId} handed out twice");
                    }
                    else
                    {
                        Interlocked.Increment(ref deduplicated);
                    }
                }
                catch (JobRejectedException) when (stop.IsCancellationRequested)
                {
                    return;
                }
            }
        })).ToArray();

        await Wait.UntilAsync(() => Interlocked.Read(ref attempts) > 12_000, "half the enqueues");
        stop.Cancel();
        var report = await Wait.ForAsync(harness.Control.StopAsync(TimeSpan.FromSeconds(20)), "the stop");
        await Task.WhenAll(producers);

        Assert.Equal(0, handler.Overlaps);
        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((created.Count, 0L), (totals.Enqueued, totals.Unfinished));
        Assert.Equal(totals.Enqueued, totals.Succeeded + totals.DeadLettered + totals.Abandoned);
        Assert.True(deduplicated > 0, "some enqueues found their key held");
        Assert.Equal(0, harness.Runtime.Ledger.Keys!.Count);
        Assert.All(report.Abandoned, a => Assert.True(created.ContainsKey(a.Job.Id)));
        await harness.DisposeAsync();
    }

    private sealed class OverlapHandler(int seed) : IJobHandler<string>
    {
        private readonly ConcurrentDictionary<string, int> _running = new();
        private int _overlaps;
        private int _calls;

        public int Overlaps => Volatile.Read(ref _overlaps);

        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
        {
            if (_running.AddOrUpdate(payload, 1, (_, n) => n + 1) > 1)
            {
                Interlocked.Increment(ref _overlaps);
            }

            try
            {
                Thread.SpinWait(200);
                return Interlocked.Increment(ref _calls) % (7 + seed) == 0 ? throw new InvalidOperationException("every few calls fail") : ValueTask.CompletedTask;
            }
            finally
            {
                _running.AddOrUpdate(payload, 0, (_, n) => n - 1);
            }
        }
    }
}
