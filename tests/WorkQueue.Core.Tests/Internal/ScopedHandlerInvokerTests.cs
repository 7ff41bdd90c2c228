using System.Collections.Concurrent;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.Metrics.Testing;
using Microsoft.Extensions.Logging;
using WorkQueue.Core.Tests.TestSupport;
using WorkQueue.Telemetry;

namespace WorkQueue.Core.Tests.Internal;

/// <summary>A scoped handler's scope: a service that throws as it is disposed does not change the job's outcome.</summary>
public sealed class ScopedHandlerInvokerTests
{
    [Fact]
    public async Task DisposeAsyncThrows_AfterTheHandlerSucceeded_JobSucceedsOnceAndTheErrorIsReported()
    {
        var logs = new Capture();
        await using var harness = QueueHarness.Start(
            o => o.Retry.MaxAttempts = 3,
            addServices: s => s.AddScoped<ThrowingOnDispose>().AddSingleton<Runs>().AddSingleton<ILoggerProvider>(logs));
        using var disposalFailed = new MetricCollector<long>(harness.Services.GetRequiredService<System.Diagnostics.Metrics.IMeterFactory>(), WorkQueueMetrics.MeterName, "workqueue.job.scope_disposal_failed");
        var runs = harness.Services.GetRequiredService<Runs>();

        await harness.Queue.EnqueueAsync<EffectHandler, string>("pay-1");
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Unfinished == 0, "the job to end");

        var totals = harness.Control.GetSnapshot().Totals;
        Assert.Equal((1L, 0L, 0L, 0L), (totals.Succeeded, totals.Failed, totals.Retried, totals.DeadLettered));
        Assert.Equal(1, runs.Count);
        Assert.Contains(logs.Entries, e => e.EventId.Name == "ScopeDisposalFailed" && e.Exception is InvalidOperationException);
        Assert.Equal(typeof(EffectHandler).FullName, Assert.Single(disposalFailed.GetMeasurementSnapshot()).Tags[WorkQueueMetrics.HandlerTag]);
    }

    [Fact]
    public async Task DisposeAsyncThrows_AfterTheHandlerFailed_TheHandlersErrorIsTheOutcome()
    {
        await using var harness = QueueHarness.Start(
            o => o.Retry.MaxAttempts = 1,
            addServices: s => s.AddScoped<ThrowingOnDispose>().AddSingleton<Runs>());

        await harness.Queue.EnqueueAsync<FailingHandler, string>("pay-2");
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.DeadLettered == 1, "the job to be dead-lettered");
        Assert.IsType<TimeZoneNotFoundException>(Assert.Single(harness.Control.GetDeadLetters()).Exception);
    }

    private sealed class Runs
    {
        private int _count;

        public int Count => Volatile.Read(ref _count);

        public void Add() => Interlocked.Increment(ref _count);
    }

    private sealed class ThrowingOnDispose : IAsyncDisposable
    {
        public ValueTask DisposeAsync() => throw new InvalidOperationException("a connection pool refused the return");
    }

    private sealed class EffectHandler(ThrowingOnDispose dependency, Runs runs) : IJobHandler<string>
    {
        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
        {
            GC.KeepAlive(dependency);
            runs.Add();
            return ValueTask.CompletedTask;
        }
    }

    private sealed class FailingHandler(ThrowingOnDispose dependency) : IJobHandler<string>
    {
        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
        {
            GC.KeepAlive(dependency);
            throw new TimeZoneNotFoundException("the handler's own error");
        }
    }

    private sealed class Capture : ILoggerProvider
    {
        public ConcurrentQueue<(EventId EventId, Exception? Exception)> Entries { get; } = new();

        public ILogger CreateLogger(string categoryName) => new Logger(this);

        public void Dispose()
        {
        }

        private sealed class Logger(Capture owner) : ILogger
        {
            public IDisposable? BeginScope<TState>(TState state)
                where TState : notnull => null;

            public bool IsEnabled(LogLevel logLevel) => true;

            public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
                owner.Entries.Enqueue((eventId, exception));
        }
    }
}
