using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Microsoft.Extensions.Diagnostics.Metrics.Testing;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Time.Testing;
using WorkQueue.Diagnostics;
using WorkQueue.Telemetry;

namespace WorkQueue.Core.Tests.Diagnostics;

/// <summary>
/// The canary's logic on a <see cref="FakeTimeProvider"/>, with the pool replaced by a hand that holds the posted probe
/// (a starved pool) and lets it run (recovery). The real starvation is proven in a child process:
/// tests/WorkQueue.AspNetCore.Tests/Diagnostics/ThreadPoolCanaryProbeTests.cs.
/// </summary>
public sealed class ThreadPoolCanaryTests : IDisposable
{
    private readonly FakeTimeProvider _time = new();
    private readonly ServiceMeterFactory _meters = new();
    private readonly Logs _logs = new();
    private readonly ConcurrentQueue<Action> _held = new();
    private long _pending = 1; // work queued on the pool, as a busy app's pool has; 0 is an idle pool

    public void Dispose() => _meters.Dispose();

    [Fact]
    public void ProbeHeldPastTheThreshold_ReportsStarvingWhileItWaits_ThenRecovers()
    {
        using var canary = Start(new ThreadPoolCanaryOptions { Interval = TimeSpan.FromSeconds(1), StarvationThreshold = TimeSpan.FromMilliseconds(500) });

        _time.Advance(TimeSpan.FromSeconds(1));
        Assert.Single(_held);
        Assert.False(canary.GetHealth().IsStarving);

        // The probe does not run (the pool is starved): the next ticks see it waiting, 1 s then 2 s.
        _time.Advance(TimeSpan.FromSeconds(1));
        var health = canary.GetHealth();
        Assert.True(health.IsStarving);
        Assert.Equal(TimeSpan.FromSeconds(1), health.Lag);
        Assert.Equal(_time.GetUtcNow(), health.StarvingSince);
        _time.Advance(TimeSpan.FromSeconds(1));
        Assert.Equal(TimeSpan.FromSeconds(2), canary.GetHealth().Lag);
        Assert.Single(_held);
        var warning = Assert.Single(_logs.Entries, e => e.Level == LogLevel.Warning);
        Assert.Equal("ThreadPoolStarving", warning.EventName);
        Assert.Contains("Move the blocking work onto a WorkQueue queue", warning.Message, StringComparison.Ordinal);

        // It finally runs; the next probe runs at once: recovered, logged once.
        Assert.True(_held.TryDequeue(out var late));
        late();
        _time.Advance(TimeSpan.FromSeconds(1));
        Assert.True(_held.TryDequeue(out var next));
        next();
        health = canary.GetHealth();
        Assert.False(health.IsStarving);
        Assert.Equal(TimeSpan.Zero, health.Lag);
        Assert.Equal(TimeSpan.FromSeconds(2), health.MaxLag);
        Assert.Single(_logs.Entries, e => e.EventName == "ThreadPoolRecovered");
    }

    [Fact]
    public void ProbesRunWithinTheThreshold_NeverStarving_AndTheLagIsMeasured()
    {
        using var lag = new MetricCollector<double>(_meters, WorkQueueMetrics.MeterName, "workqueue.threadpool.queue_lag");
        using var canary = Start(new ThreadPoolCanaryOptions { Interval = TimeSpan.FromMilliseconds(100), StarvationThreshold = TimeSpan.FromMilliseconds(500) });
        for (int i = 0; i < 20; i++)
        {
            _time.Advance(TimeSpan.FromMilliseconds(100));
            Assert.True(_held.TryDequeue(out var probe));
            _time.Advance(TimeSpan.FromMilliseconds(30));
            probe();
        }

        var health = canary.GetHealth();
        Assert.False(health.IsStarving);
        Assert.Equal(TimeSpan.FromMilliseconds(30), health.MaxLag);
        Assert.Equal(20, lag.GetMeasurementSnapshot().Count);
        Assert.All(lag.GetMeasurementSnapshot(), m => Assert.Equal(0.03, m.Value, 6));
        Assert.Empty(_logs.Entries);
    }

    [Fact]
    public void IdlePool_ProbedOncePerIdleInterval_ThenEveryIntervalOnceWorkIsQueued()
    {
        _pending = 0;
        using var canary = Start(new ThreadPoolCanaryOptions { Interval = TimeSpan.FromSeconds(1), IdleInterval = TimeSpan.FromSeconds(10) });

        // The first tick measures; then, with nothing queued, one probe per 10 s instead of one per second.
        int posted = 0;
        for (int second = 1; second <= 30; second++)
        {
            _time.Advance(TimeSpan.FromSeconds(1));
            while (_held.TryDequeue(out var probe))
            {
                posted++;
                probe();
            }
        }

        Assert.Equal(3, posted);

        // Work queued on the pool: the next tick posts, and one held past the threshold is seen while it waits.
        _pending = 5;
        _time.Advance(TimeSpan.FromSeconds(1));
        Assert.Single(_held);
        _time.Advance(TimeSpan.FromSeconds(1));
        Assert.True(canary.GetHealth().IsStarving);
        Assert.Single(_logs.Entries, e => e.EventName == "ThreadPoolStarving");
    }

    [Fact]
    public void Disabled_PostsNothing()
    {
        using var canary = Start(new ThreadPoolCanaryOptions { Enabled = false });
        _time.Advance(TimeSpan.FromMinutes(1));
        Assert.Empty(_held);
        Assert.False(canary.GetHealth().IsEnabled);
    }

    private ThreadPoolCanary Start(ThreadPoolCanaryOptions options) =>
        new(options, _time, new WorkQueueMetrics(_meters), _logs, (probe, canary) => _held.Enqueue(() => probe(canary)), () => Volatile.Read(ref _pending));

    private sealed class ServiceMeterFactory : IMeterFactory
    {
        private readonly List<Meter> _meters = [];

        public Meter Create(MeterOptions options)
        {
            var meter = new Meter(options.Name, options.Version, options.Tags, this);
            _meters.Add(meter);
            return meter;
        }

        public void Dispose() => _meters.ForEach(m => m.Dispose());
    }

    private sealed class Logs : ILogger
    {
        public ConcurrentQueue<(LogLevel Level, string? EventName, string Message)> Entries { get; } = new();

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            Entries.Enqueue((logLevel, eventId.Name, formatter(state, exception)));
    }
}
