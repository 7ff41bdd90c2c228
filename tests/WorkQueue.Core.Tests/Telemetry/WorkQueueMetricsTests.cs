using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Telemetry;

public sealed class WorkQueueMetricsTests
{
    [Fact]
    public async Task Instruments_JobsRunAndFail_RecordedWithQueueTag()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 1; });
        var meterFactory = harness.Services.GetRequiredService<IMeterFactory>();
        var measurements = new ConcurrentQueue<(string Instrument, double Value, Dictionary<string, object?> Tags)>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            // Only this test's meter: other tests run their own queues in parallel.
            if (instrument.Meter.Name == "WorkQueue" && ReferenceEquals(instrument.Meter.Scope, meterFactory))
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((i, v, tags, _) => measurements.Enqueue((i.Name, v, ToDictionary(tags))));
        listener.SetMeasurementEventCallback<int>((i, v, tags, _) => measurements.Enqueue((i.Name, v, ToDictionary(tags))));
        listener.SetMeasurementEventCallback<double>((i, v, tags, _) => measurements.Enqueue((i.Name, v, ToDictionary(tags))));
        listener.Start();
        var done = new CountdownSignal(2);

        Assert.True(harness.Queue.TryEnqueue(_ => done.Signal()));
        Assert.True(harness.Queue.TryEnqueue(_ => { done.Signal(); throw new InvalidOperationException("fails"); }));
        await Wait.ForAsync(done.Task, "two jobs");
        await Wait.UntilAsync(() => measurements.Count(m => m.Instrument == "workqueue.job.dead_lettered") == 1, "the dead letter is measured");
        listener.RecordObservableInstruments();

        Assert.Equal(2, measurements.Count(m => m.Instrument == "workqueue.job.enqueued"));
        Assert.Equal(2, measurements.Count(m => m.Instrument == "workqueue.job.queue_wait"));
        var durations = measurements.Where(m => m.Instrument == "workqueue.job.duration").ToList();
        Assert.Equal(["failure", "success"], durations.Select(d => (string)d.Tags["workqueue.job.outcome"]!).Order());
        // The thread-pool canary's instruments describe the process's pool, not a queue: they carry no queue tag.
        var (poolWide, perQueue) = (measurements.Where(IsThreadPool).ToList(), measurements.Where(m => !IsThreadPool(m)).ToList());
        Assert.All(perQueue, m => Assert.Equal("default", m.Tags["workqueue.queue"]));
        Assert.All(poolWide, m => Assert.DoesNotContain("workqueue.queue", m.Tags.Keys));
        Assert.Contains(measurements, m => m.Instrument == "workqueue.workers.current" && m.Value == 1);
        Assert.Contains(measurements, m => m.Instrument == "workqueue.queue.depth" && m.Value == 0);
        Assert.Contains(measurements, m => m.Instrument == "workqueue.queue.capacity" && m.Value == 10_000);
    }

    private static bool IsThreadPool((string Instrument, double Value, Dictionary<string, object?> Tags) m) =>
        m.Instrument.StartsWith("workqueue.threadpool.", StringComparison.Ordinal);

    private static Dictionary<string, object?> ToDictionary(ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var result = new Dictionary<string, object?>();
        foreach (var tag in tags)
        {
            result[tag.Key] = tag.Value;
        }

        return result;
    }
}
