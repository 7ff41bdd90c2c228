using System.Runtime.ExceptionServices;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.Core.Tests.Workers;
using WorkQueue.Queueing;

namespace WorkQueue.Core.Tests.Timing;

/// <summary>
/// The engine's own timing must not depend on thread-pool timers: while other code starves the pool, job timeouts,
/// retry delays, autoscaling and idle retirement all still happen. These tests cap the process-wide pool, so they run alone.
/// </summary>
[Collection(ThreadPoolCapCollection.Name)]
public sealed class StarvedPoolTimingTests
{
    [Fact]
    public void EngineTiming_ThreadPoolStarved_TimeoutRetryScalingAndRetirementStillHappen()
    {
        // Everything runs on one dedicated thread with blocking waits: while the pool is starved no await could resume.
        Exception? failure = null;
        var observer = new Thread(() =>
        {
            try
            {
                RunStarved();
            }
            catch (Exception ex)
            {
                failure = ex;
            }
        });
        observer.Start();
        Assert.True(observer.Join(Wait.Generous * 4), "the starved-pool scenario did not finish");
        if (failure is not null)
        {
            ExceptionDispatchInfo.Throw(failure);
        }
    }

    private static void RunStarved()
    {
        var services = new ServiceCollection().AddLogging();
        services.AddWorkQueue(o =>
        {
            o.MinWorkers = 1;
            o.MaxWorkers = 3;
            o.IdleTimeout = TimeSpan.FromMilliseconds(200);
            o.JobTimeout = TimeSpan.FromMilliseconds(300);
            o.Retry.MaxAttempts = 2;
            o.Retry.BaseDelay = TimeSpan.FromMilliseconds(50);
            o.AutoScale.TargetQueueWait = TimeSpan.FromMilliseconds(20);
            o.AutoScale.SampleInterval = TimeSpan.FromMilliseconds(20);
            o.AutoScale.ScaleUpCooldown = TimeSpan.Zero;
        });
        var provider = services.BuildServiceProvider();
        var queues = provider.GetRequiredService<WorkQueueProvider>();
        var queue = provider.GetRequiredService<IInMemoryWorkQueue>();
        var control = queues.Queues.Single();

        int cap = Math.Max(4, Environment.ProcessorCount);
        var capScope = ThreadPoolCap.Apply(cap);
        var poolGate = new Gate();
        try
        {
            for (int i = 0; i < cap * 2; i++)
            {
                ThreadPool.UnsafeQueueUserWorkItem(_ => poolGate.Block(default), null);
            }

            Assert.True(
                SpinWait.SpinUntil(() => poolGate.Entered > 0 && ThreadPool.ThreadCount >= cap && ThreadPool.PendingWorkItemCount > 0, Wait.Generous),
                "the blocking work never saturated the pool");

            // A timeout (the job waits for its token) and a retry delay, both on the engine's timer thread.
            int attempts = 0;
            using var secondAttempt = new ManualResetEventSlim();
            Assert.True(queue.TryEnqueue(ct =>
            {
                if (Interlocked.Increment(ref attempts) == 1)
                {
                    Assert.True(SpinWait.SpinUntil(() => ct.IsCancellationRequested, Wait.Generous), "the job timeout never fired");
                    ct.ThrowIfCancellationRequested();
                }

                secondAttempt.Set();
            }));
            Assert.True(secondAttempt.Wait(Wait.Generous), "the timed-out job was not retried while the pool was starved");

            // Autoscaling: jobs wait behind a blocked thread, so threads are added up to MaxWorkers.
            using var jobGate = new Gate();
            for (int i = 0; i < 3; i++)
            {
                Assert.True(queue.TryEnqueue(jobGate.Block));
            }

            Assert.True(jobGate.WaitEntered(3, Wait.Generous), $"the autoscaler did not add threads ({control.GetSnapshot().Workers} alive)");

            // Idle retirement: back down to MinWorkers.
            jobGate.Open();
            Assert.True(SpinWait.SpinUntil(() => control.GetSnapshot().Workers == 1, Wait.Generous), "idle threads did not retire");
            Assert.True(ThreadPool.PendingWorkItemCount > 0, "the pool was not starved throughout");
        }
        finally
        {
            poolGate.Open();
            capScope.Dispose();
        }

        var totals = control.GetSnapshot().Totals;
        Assert.Equal((4L, 1L, 1L), (totals.Succeeded, totals.Retried, totals.Failed));
        queues.StopAsync(Wait.Generous).GetAwaiter().GetResult();
        provider.DisposeAsync().AsTask().GetAwaiter().GetResult();
    }
}
