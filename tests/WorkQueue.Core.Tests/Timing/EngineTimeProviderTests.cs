using WorkQueue.Timing;

namespace WorkQueue.Core.Tests.Timing;

public sealed class EngineTimeProviderTests
{
    [Fact]
    public async Task CreateTimer_Due_FiresOnTheDedicatedTimerThread()
    {
        var fired = new TaskCompletionSource<(bool Pool, string? Name)>(TaskCreationOptions.RunContinuationsAsynchronously);

        using var timer = EngineTimeProvider.Instance.CreateTimer(_ => fired.TrySetResult((Thread.CurrentThread.IsThreadPoolThread, Thread.CurrentThread.Name)), null, TimeSpan.FromMilliseconds(20), Timeout.InfiniteTimeSpan);

        var (pool, name) = await Wait.ForAsync(fired.Task, "the timer");
        Assert.False(pool);
        Assert.Equal("WorkQueue timers", name);
    }

    [Fact]
    public async Task Change_PeriodicTimerStoppedThenRearmed_FiresAgain()
    {
        int ticks = 0;
        var third = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var rearmed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        bool stopped = false;
        using var timer = EngineTimeProvider.Instance.CreateTimer(
            _ =>
            {
                if (Volatile.Read(ref stopped))
                {
                    rearmed.TrySetResult();
                }
                else if (Interlocked.Increment(ref ticks) == 3)
                {
                    third.TrySetResult();
                }
            },
            null,
            TimeSpan.FromMilliseconds(5),
            TimeSpan.FromMilliseconds(5));

        await Wait.ForAsync(third.Task, "three periodic ticks");
        timer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        Volatile.Write(ref stopped, true);

        timer.Change(TimeSpan.FromMilliseconds(5), Timeout.InfiniteTimeSpan);
        await Wait.ForAsync(rearmed.Task, "the re-armed timer");
    }

    [Fact]
    public void Dispose_ManyLongTimers_TheirEntriesDoNotPileUpInTheHeap()
    {
        // A job timeout per job: each job creates a long timer and disposes it when it ends. Stale entries must not wait
        // in the heap until their due time (minutes away), or memory grows with throughput.
        for (int i = 0; i < 20_000; i++)
        {
            EngineTimeProvider.Instance.CreateTimer(static _ => { }, null, TimeSpan.FromMinutes(10), Timeout.InfiniteTimeSpan).Dispose();
        }

        Assert.True(EngineTimeProvider.Instance.QueuedEntries < 5_000, $"{EngineTimeProvider.Instance.QueuedEntries} entries left in the heap");
    }

    [Fact]
    public async Task Callback_Throws_LaterTimersStillFire()
    {
        var later = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var throwing = EngineTimeProvider.Instance.CreateTimer(_ => throw new InvalidOperationException("boom"), null, TimeSpan.Zero, Timeout.InfiniteTimeSpan);
        using var timer = EngineTimeProvider.Instance.CreateTimer(_ => later.TrySetResult(), null, TimeSpan.FromMilliseconds(30), Timeout.InfiniteTimeSpan);

        await Wait.ForAsync(later.Task, "a timer after one that threw");
    }
}
