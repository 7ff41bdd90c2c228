using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;
using WorkQueue.Core.Tests.TestSupport;
using WorkQueue.Internal;

namespace WorkQueue.Core.Tests.Execution;

/// <summary>Backoff, job timeouts and autoscaling driven by a <see cref="FakeTimeProvider"/>: no real waiting for time.</summary>
public sealed class FakeTimeTests
{
    private readonly FakeTimeProvider _time = new();

    [Fact]
    public async Task Retry_FailedJob_RunsAgainOnlyOnceItsBackoffDelayHasPassed()
    {
        // Nominal delay 10 s for the first retry; with the jitter source at 0.5 it is 7.5 s (between half and all).
        await using var harness = Start(o => { o.Retry.MaxAttempts = 2; o.Retry.BaseDelay = TimeSpan.FromSeconds(10); });
        var second = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        int attempts = 0;
        Assert.True(harness.Queue.TryEnqueue(_ =>
        {
            if (Interlocked.Increment(ref attempts) == 1)
            {
                throw new InvalidOperationException("first attempt fails");
            }

            second.SetResult();
        }));
        await Wait.UntilAsync(() => harness.Runtime.PendingRetries == 1, "the retry is scheduled");

        _time.Advance(TimeSpan.FromSeconds(7.4));
        Assert.Equal(1, harness.Runtime.PendingRetries);

        _time.Advance(TimeSpan.FromSeconds(0.2));
        Assert.Equal(0, harness.Runtime.PendingRetries);
        await Wait.ForAsync(second.Task, "the second attempt");
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Succeeded == 1, "the success is counted");
        Assert.Equal((1, 1), (harness.Control.GetSnapshot().Totals.Retried, harness.Control.GetSnapshot().Totals.Failed));
    }

    [Fact]
    public async Task JobTimeout_AwaitingJob_CancelledOnlyOnceTheTimeoutHasPassedAndDeadLetteredAsTimeout()
    {
        await using var harness = Start(o => o.JobTimeout = TimeSpan.FromSeconds(30));
        var started = new TaskCompletionSource<CancellationToken>(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(harness.Queue.TryEnqueue(async ct =>
        {
            started.SetResult(ct);
            await Task.Delay(Timeout.Infinite, ct);
        }));
        var token = await Wait.ForAsync(started.Task, "the job to start");

        _time.Advance(TimeSpan.FromSeconds(29));
        Assert.False(token.IsCancellationRequested);

        _time.Advance(TimeSpan.FromSeconds(2));
        Assert.True(token.IsCancellationRequested);
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.DeadLettered == 1, "the timed-out job is dead-lettered");
        Assert.IsType<TimeoutException>(Assert.Single(harness.Control.GetDeadLetters()).Exception);
    }

    [Fact]
    public async Task AutoScaler_OldestJobWaitsPastTheTarget_AddsThreadsWhenTheSampleRuns()
    {
        await using var harness = Start(o =>
        {
            o.MinWorkers = 1;
            o.MaxWorkers = 4;
            o.AutoScale.TargetQueueWait = TimeSpan.FromMilliseconds(100);
            o.AutoScale.SampleInterval = TimeSpan.FromMilliseconds(250);

            // One scale-up only: the job that starts on the added thread waited too, and would add another.
            o.AutoScale.ScaleUpCooldown = TimeSpan.FromHours(1);
        });
        using var gate = new Gate();
        Assert.True(harness.Queue.TryEnqueue(gate.Block));
        await Wait.ForAsync(gate.EnteredAsync(1), "the only thread to be busy");
        Assert.True(harness.Queue.TryEnqueue(gate.Block));

        _time.Advance(TimeSpan.FromMilliseconds(200));
        Assert.Equal(1, harness.Control.GetSnapshot().Workers);

        _time.Advance(TimeSpan.FromMilliseconds(100));
        Assert.Equal(2, harness.Control.GetSnapshot().TargetWorkers);
        await Wait.ForAsync(gate.EnteredAsync(2), "the waiting job on the added thread");
        gate.Open();
    }

    private QueueHarness Start(Action<WorkQueueOptions> configure) =>
        QueueHarness.Start(
            o =>
            {
                o.MinWorkers = 1;
                o.MaxWorkers = 1;
                configure(o);
            },
            addServices: s => s.AddSingleton(new WorkQueueEnvironment(_time, () => 0.5)));
}
