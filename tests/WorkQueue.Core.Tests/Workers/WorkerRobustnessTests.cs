using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Workers;

public sealed class WorkerRobustnessTests
{
    [Fact]
    public async Task Execute_LoggerThrowsWhileRetrying_JobStillRetriedAndWorkerSurvives()
    {
        int attempts = 0;
        var succeeded = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var thrower = new ThrowOnceLoggerProvider(eventName: "JobRetrying");
        await using var harness = QueueHarness.Start(
            o => { o.MinWorkers = 1; o.MaxWorkers = 1; o.Retry.MaxAttempts = 2; o.Retry.BaseDelay = TimeSpan.FromMilliseconds(1); },
            addServices: s => s.AddLogging(b => b.AddProvider(thrower)));

        Assert.True(harness.Queue.TryEnqueue(_ =>
        {
            if (Interlocked.Increment(ref attempts) == 1)
            {
                throw new InvalidOperationException("first attempt fails");
            }

            succeeded.SetResult();
        }));

        await Wait.ForAsync(succeeded.Task, "the retry despite the throwing logger");
        Assert.True(thrower.Threw);
        var next = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(harness.Queue.TryEnqueue(_ => next.SetResult()));
        await Wait.ForAsync(next.Task, "a later job on the same worker");
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Succeeded == 2, "the later job is counted");
        var snapshot = harness.Control.GetSnapshot();
        Assert.Equal((1, 2L), (snapshot.Workers, snapshot.Totals.Succeeded));
    }

    [Fact]
    public async Task Job_ReplacesSynchronizationContext_LaterJobsStillWakeTheWorker()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 1; });
        var first = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        Assert.True(harness.Queue.TryEnqueue(_ =>
        {
            SynchronizationContext.SetSynchronizationContext(new BlackHoleContext());
            first.SetResult();
        }));
        await Wait.ForAsync(first.Task, "the job that swaps the context");
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().BusyWorkers == 0, "the worker is idle again");

        for (int i = 0; i < 20; i++)
        {
            var ran = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            Assert.True(harness.Queue.TryEnqueue(async ct =>
            {
                await Task.Delay(1, ct);
                ran.SetResult(SynchronizationContext.Current is not BlackHoleContext);
            }));
            Assert.True(await Wait.ForAsync(ran.Task, $"job {i} after the swap"));
        }
    }

    [Fact]
    public async Task JobToken_EachJobGetsItsOwn_NextJobsTimeoutDoesNotCancelThePrevious()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 1; o.JobTimeout = TimeSpan.FromMilliseconds(50); });
        var firstToken = new TaskCompletionSource<CancellationToken>(TaskCreationOptions.RunContinuationsAsynchronously);
        var secondTimedOut = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        Assert.True(harness.Queue.TryEnqueue(ct => firstToken.SetResult(ct)));
        Assert.True(harness.Queue.TryEnqueue(async ct =>
        {
            try
            {
                await Task.Delay(Timeout.Infinite, ct);
            }
            finally
            {
                secondTimedOut.SetResult();
            }
        }));

        var token = await Wait.ForAsync(firstToken.Task, "the first job");
        await Wait.ForAsync(secondTimedOut.Task, "the second job's timeout");
        Assert.False(token.IsCancellationRequested);
    }

    [Fact]
    public async Task StopAsync_FinishedJobsLeftRegistrationsOnTheirTokens_NoneFiresAtShutdown()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 1; });
        int fired = 0;
        var done = new CountdownSignal(1000);
        for (int i = 0; i < 1000; i++)
        {
            // A registration that is never disposed: it must die with the job's own token source.
            Assert.True(harness.Queue.TryEnqueue(ct => { ct.Register(() => Interlocked.Increment(ref fired)); done.Signal(); }));
        }

        await Wait.ForAsync(done.Task, "1000 jobs");
        await Wait.ForAsync(harness.Control.StopAsync(TimeSpan.Zero), "the stop");

        Assert.Equal(0, Volatile.Read(ref fired));
    }

    [Fact]
    public async Task StopAsync_PausedQueue_ResumesAndDrains()
    {
        await using var harness = QueueHarness.Start();
        harness.Control.Pause();
        int ran = 0;
        for (int i = 0; i < 10; i++)
        {
            Assert.True(harness.Queue.TryEnqueue(_ => Interlocked.Increment(ref ran)));
        }

        var report = await Wait.ForAsync(harness.Control.StopAsync(Timeout.InfiniteTimeSpan), "stopping a paused queue");

        Assert.True(report.Drained);
        Assert.Equal(10, ran);
    }

    /// <summary>A context that drops everything posted to it: a continuation captured here would never run.</summary>
    private sealed class BlackHoleContext : SynchronizationContext
    {
        public override void Post(SendOrPostCallback d, object? state)
        {
        }
    }

    private sealed class ThrowOnceLoggerProvider(string eventName) : ILoggerProvider
    {
        private int _threw;

        public bool Threw => Volatile.Read(ref _threw) == 1;

        public ILogger CreateLogger(string categoryName) => new ThrowingLogger(this);

        public void Dispose()
        {
        }

        private sealed class ThrowingLogger(ThrowOnceLoggerProvider owner) : ILogger
        {
            public IDisposable? BeginScope<TState>(TState state)
                where TState : notnull => null;

            public bool IsEnabled(LogLevel logLevel) => true;

            public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
            {
                if (eventId.Name == owner.EventName && Interlocked.Exchange(ref owner._threw, 1) == 0)
                {
                    throw new InvalidOperationException("the logging provider failed");
                }
            }
        }

        private string EventName => eventName;
    }
}
