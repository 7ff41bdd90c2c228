using System.Collections.Concurrent;
using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Scheduling;

/// <summary>
/// Scheduled jobs on the real engine clock under many producers that schedule and cancel at once, with jobs coming due
/// while others are cancelled, and a stop in the middle: every job ends exactly once.
/// </summary>
public sealed class ScheduledJobStressTests
{
    private const int Producers = 8;
    private const int PerProducer = 2_000;

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public async Task ScheduleAndCancel_ManyProducers_EachJobRunsOrIsCancelledExactlyOnce(int seed)
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 2; o.MaxWorkers = 4; o.MaxScheduledJobs = Producers * PerProducer; });
        var runs = new ConcurrentDictionary<long, int>();
        var cancelled = new ConcurrentDictionary<string, bool>();
        var ids = new ConcurrentDictionary<string, long>();
        long nextToken = 0;

        await Task.WhenAll(Enumerable.Range(0, Producers).Select(p => Task.Run(() =>
        {
            var random = new Random(seed * 100 + p);
            var mine = new List<string>();
            for (int i = 0; i < PerProducer; i++)
            {
                // Delays from "already due" to 30 ms, so jobs come due while others are scheduled and cancelled.
                // Keyed by a token of the test's own: a job already due may run before Schedule returns its id.
                long token = Interlocked.Increment(ref nextToken);
                string id = harness.Queue.Schedule(_ => runs.AddOrUpdate(token, 1, (_, n) => n + 1), TimeSpan.FromMilliseconds(random.Next(-5, 30)));
                ids[id] = token;
                mine.Add(id);
                if (random.Next(3) == 0)
                {
                    string victim = mine[random.Next(mine.Count)];
                    if (harness.Queue.CancelScheduled(victim))
                    {
                        Assert.True(cancelled.TryAdd(victim, true), $"job {victim} cancelled twice");
                    }
                }
            }
        })));

        long total = Producers * PerProducer;
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Unfinished == 0, "every job to end");
        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal(total, totals.Enqueued);
        Assert.Equal(cancelled.Count, totals.Canceled);
        Assert.Equal(total - cancelled.Count, totals.Succeeded);
        Assert.Equal(total, ids.Count);
        foreach (var (id, token) in ids)
        {
            int ran = runs.GetValueOrDefault(token);
            Assert.True(cancelled.ContainsKey(id) ? ran == 0 : ran == 1, $"job {id}: cancelled {cancelled.ContainsKey(id)}, ran {ran} times");
        }
    }

    [Fact]
    public async Task StopAsync_WhileProducersSchedule_EveryJobRunsIsRejectedOrIsReportedExactlyOnce()
    {
        var harness = QueueHarness.Start(o => { o.MinWorkers = 2; o.MaxWorkers = 2; o.MaxScheduledJobs = 1_000_000; });
        var runs = new ConcurrentDictionary<long, int>();
        var accepted = new ConcurrentDictionary<string, long>();
        long rejected = 0;
        long nextToken = 0;
        using var stopping = new CancellationTokenSource();

        var producers = Enumerable.Range(0, 4).Select(p => Task.Run(() =>
        {
            var random = new Random(p);
            while (!stopping.IsCancellationRequested || random.Next(50) != 0)
            {
                try
                {
                    long token = Interlocked.Increment(ref nextToken);
                    string id = harness.Queue.Schedule(_ => runs.AddOrUpdate(token, 1, (_, n) => n + 1), TimeSpan.FromMilliseconds(random.Next(0, 200)));
                    accepted[id] = token;
                }
                catch (JobRejectedException ex) when (ex.Reason == RejectionReason.QueueStopped)
                {
                    Interlocked.Increment(ref rejected);
                }
            }
        })).ToArray();

        await Wait.UntilAsync(() => accepted.Count > 5_000, "producers to get going");
        var report = await Wait.ForAsync(harness.Control.StopAsync(TimeSpan.FromSeconds(20)), "the stop");
        stopping.Cancel();
        await Task.WhenAll(producers);

        var notDue = report.Abandoned.Where(a => a.Reason == AbandonReason.NotDue).Select(a => a.Job.Id).ToHashSet();
        Assert.Equal(report.Abandoned.Count, notDue.Count);
        foreach (var (id, token) in accepted)
        {
            int ran = runs.GetValueOrDefault(token);
            Assert.True(notDue.Contains(id) ? ran == 0 : ran == 1, $"job {id}: reported {notDue.Contains(id)}, ran {ran} times");
        }

        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((accepted.Count, rejected, 0L), (totals.Enqueued, totals.Rejected, totals.Unfinished));
        Assert.Equal(accepted.Count - notDue.Count, totals.Succeeded);
        await harness.DisposeAsync();
    }
}
