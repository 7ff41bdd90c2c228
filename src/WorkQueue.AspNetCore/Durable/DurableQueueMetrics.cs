using System.Diagnostics.Metrics;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The cluster-wide figures of durable queues, as gauges of the <c>WorkQueue</c> meter with a <c>workqueue.queue</c>
/// tag: read from Redis (shared by every instance), unlike the engine's instruments, which count this process's jobs.
/// Observing them keeps the figures fresh (about one Redis call a second per queue while something collects).
/// </summary>
internal sealed class DurableQueueMetrics
{
    private const string QueueTag = "workqueue.queue";

    private readonly DurableQueueRegistry _registry;

    public DurableQueueMetrics(IMeterFactory meterFactory, DurableQueueRegistry registry)
    {
        _registry = registry;
        var meter = meterFactory.Create(WorkQueueTelemetry.MeterName);
        meter.CreateObservableGauge("workqueue.durable.stream.length", () => Observe(static s => s.StreamLength), "{job}", "Unfinished jobs in a durable queue's stream: not yet fetched, or fetched and not yet settled (all instances).");
        meter.CreateObservableGauge("workqueue.durable.pending", () => Observe(static s => s.Pending), "{job}", "Jobs fetched by some instance and not yet settled.");
        meter.CreateObservableGauge("workqueue.durable.delayed", () => Observe(static s => s.DelayedRetries), "{job}", "Failed jobs waiting in Redis for their retry's due time.");
        meter.CreateObservableGauge("workqueue.durable.scheduled", () => Observe(static s => s.Scheduled), "{job}", "Scheduled jobs waiting in Redis for their time (outside the stream until a consumer's fetch moves them there once due).");
        meter.CreateObservableGauge("workqueue.durable.dead_letters", () => Observe(static s => s.DeadLetters), "{job}", "Jobs in a durable queue's dead-letter stream.");
        meter.CreateObservableGauge("workqueue.durable.consumers", () => Observe(static s => s.Consumers.Count), "{consumer}", "Consumers in a durable queue's group (one per process start, until removed).");
    }

    private IEnumerable<Measurement<long>> Observe(Func<DurableQueueStats, long> read)
    {
        foreach (var queue in _registry.Queues)
        {
            if (queue.Store.GetStats() is { } stats)
            {
                yield return new Measurement<long>(read(stats), new KeyValuePair<string, object?>(QueueTag, queue.Store.QueueName));
            }
        }
    }
}
