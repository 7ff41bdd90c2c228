using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.Metrics.Testing;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>The cluster-wide gauges of a durable queue, read from Redis.</summary>
public sealed class DurableQueueMetricsTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task Gauges_ReportTheStreamAndDeadLettersOfTheQueue()
    {
        var log = new JobLog { Behavior = static (job, _, _) => job.N < 0 ? throw new InvalidOperationException("bad job") : ValueTask.CompletedTask };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o => o.Retry.MaxAttempts = 1);
        var meters = host.Services.GetRequiredService<IMeterFactory>();
        using var length = new MetricCollector<long>(meters, WorkQueueTelemetry.MeterName, "workqueue.durable.stream.length");
        using var dead = new MetricCollector<long>(meters, WorkQueueTelemetry.MeterName, "workqueue.durable.dead_letters");
        using var consumers = new MetricCollector<long>(meters, WorkQueueTelemetry.MeterName, "workqueue.durable.consumers");

        await host.Producer.EnqueueAsync(new TestJob(-1));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "the failing job to run");
        host.Control.Pause();
        for (int n = 0; n < 3; n++)
        {
            await host.Producer.EnqueueAsync(new TestJob(n));
        }

        await Eventually.HoldsAsync(() => Task.FromResult(Observed(length) == 3 && Observed(dead) == 1 && Observed(consumers) == 1), "stream length 3, one dead letter, one consumer");
        Assert.Equal(DurableTestHost.Queue, length.LastMeasurement!.Tags["workqueue.queue"]);
        host.Control.Resume();
        await log.WaitUntilAsync(() => log.Completed == 3, "the three jobs");
        await Eventually.HoldsAsync(() => Task.FromResult(Observed(length) == 0), "an empty stream");
    }

    [Fact]
    public async Task Gauges_ScheduledJobsNotYetDue_CountedAsScheduledNotAsDelayedRetries()
    {
        await using var host = await DurableTestHost.StartAsync(redis.Server, new JobLog(), DurableTestHost.NewPrefix());
        var meters = host.Services.GetRequiredService<IMeterFactory>();
        using var scheduled = new MetricCollector<long>(meters, WorkQueueTelemetry.MeterName, "workqueue.durable.scheduled");
        using var delayed = new MetricCollector<long>(meters, WorkQueueTelemetry.MeterName, "workqueue.durable.delayed");

        string first = await host.Producer.ScheduleAsync(new TestJob(1), TimeSpan.FromHours(1));
        await host.Producer.ScheduleAsync(new TestJob(2), TimeSpan.FromHours(1));

        await Eventually.HoldsAsync(() => Task.FromResult(Observed(scheduled) == 2 && Observed(delayed) == 0), "two scheduled jobs and no retry");
        Assert.Equal(DurableTestHost.Queue, scheduled.LastMeasurement!.Tags["workqueue.queue"]);
        Assert.True(await host.Producer.CancelScheduledAsync(first));
        await Eventually.HoldsAsync(() => Task.FromResult(Observed(scheduled) == 1), "one scheduled job left");
    }

    private static long? Observed(MetricCollector<long> collector)
    {
        collector.RecordObservableInstruments();
        return collector.LastMeasurement?.Value;
    }
}
