using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using WorkQueue.AspNetCore.Dashboard;

namespace WorkQueue.AspNetCore.Tests.Dashboard;

public sealed class QueueHistoryTests
{
    private static readonly DateTimeOffset T0 = new(2026, 11, 23, 12, 0, 0, TimeSpan.Zero);

    [Fact]
    public void Record_MoreThanCapacity_KeepsTheNewestOldestFirst()
    {
        var history = new QueueHistory("q", capacity: 3);

        for (int i = 0; i < 5; i++)
        {
            history.Record(T0.AddSeconds(i), Snapshot(depth: i, succeeded: 0));
        }

        Assert.Equal([2, 3, 4], history.After(DateTimeOffset.MinValue).Select(s => s.Snapshot.Depth));
    }

    [Fact]
    public void Record_JobsEndedBetweenTicks_GivesJobsPerSecondSinceThePreviousTick()
    {
        var history = new QueueHistory("q", capacity: 10);

        history.Record(T0, Snapshot(depth: 0, succeeded: 100, deadLettered: 0));
        history.Record(T0.AddSeconds(2), Snapshot(depth: 0, succeeded: 150, deadLettered: 10));

        Assert.Equal([0.0, 30.0], history.After(DateTimeOffset.MinValue).Select(s => s.JobsPerSecond));
    }

    [Fact]
    public void After_ReturnsOnlyLaterSamples()
    {
        var history = new QueueHistory("q", capacity: 10);
        for (int i = 0; i < 4; i++)
        {
            history.Record(T0.AddSeconds(i), Snapshot(depth: i, succeeded: 0));
        }

        Assert.Equal([2, 3], history.After(T0.AddSeconds(1)).Select(s => s.Snapshot.Depth));
    }

    [Fact]
    public async Task SampleAll_RecordsEveryQueueAtTheTimeProvidersTime()
    {
        await using var services = new ServiceCollection()
            .AddLogging()
            .AddWorkQueue(o => o.Capacity = 10).AddQueue("io", o => o.Capacity = 20).Services
            .BuildServiceProvider();
        var store = new DashboardHistory();
        var sampler = new DashboardSampler(services.GetRequiredService<IWorkQueueProvider>(), store, new FixedTime(T0), NullLogger<DashboardSampler>.Instance);

        sampler.SampleAll();

        var first = Assert.Single(store.Find("default")!.After(DateTimeOffset.MinValue));
        Assert.Equal((T0, 10), (first.At, first.Snapshot.Capacity));
        Assert.Equal(20, Assert.Single(store.Find("IO")!.After(DateTimeOffset.MinValue)).Snapshot.Capacity);
        foreach (var queue in services.GetRequiredService<IWorkQueueProvider>().Queues)
        {
            await queue.StopAsync(TimeSpan.FromSeconds(5));
        }
    }

    internal static WorkQueueSnapshot Snapshot(int depth, long succeeded, long deadLettered = 0, string name = "q") => new()
    {
        Name = name,
        Depth = depth,
        Capacity = 100,
        FullMode = QueueFullMode.Wait,
        Workers = 1,
        BusyWorkers = 0,
        TargetWorkers = 1,
        MinWorkers = 1,
        MaxWorkers = 4,
        RunningJobs = 0,
        MaxConcurrency = 1,
        WaitingContinuations = 0,
        Mode = WorkerMode.Auto,
        IsPaused = false,
        IsAccepting = true,
        Totals = new WorkQueueTotals(succeeded + deadLettered, 0, succeeded + deadLettered, succeeded, deadLettered, 0, deadLettered, 0, 0, 0, 0, 0),
        QueueWait = LatencySummary.Empty,
        RunTime = LatencySummary.Empty,
        StuckJobs = [],
    };

    private sealed class FixedTime(DateTimeOffset now) : TimeProvider
    {
        public override DateTimeOffset GetUtcNow() => now;
    }
}
