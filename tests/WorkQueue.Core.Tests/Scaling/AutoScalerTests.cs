using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Scaling;

public sealed class AutoScalerTests
{
    private static void FastScaling(WorkQueueOptions o)
    {
        o.MinWorkers = 1;
        o.MaxWorkers = 6;
        o.IdleTimeout = TimeSpan.FromMilliseconds(100);
        o.AutoScale.TargetQueueWait = TimeSpan.FromMilliseconds(20);
        o.AutoScale.ScaleUpCooldown = TimeSpan.FromMilliseconds(20);
        o.AutoScale.SampleInterval = TimeSpan.FromMilliseconds(20);
    }

    [Fact]
    public async Task Backlog_AllWorkersBlocked_ScalesUpToMaxThenBackDownWhenIdle()
    {
        await using var harness = QueueHarness.Start(FastScaling);
        using var gate = new Gate();
        var queue = harness.Queue;
        var control = harness.Control;
        for (int i = 0; i < 20; i++)
        {
            Assert.True(queue.TryEnqueue(gate.Block));
        }

        // No job ever finishes while the gate is shut, so only the wait of queued jobs can drive this.
        await Wait.ForAsync(gate.EnteredAsync(6), "six workers running blocked jobs");
        Assert.Equal(6, control.GetSnapshot().Workers);
        Assert.Equal(6, gate.MaxInside);

        gate.Open();
        await Wait.UntilAsync(() => control.GetSnapshot().Totals.Succeeded == 20, "the backlog clears");
        await Wait.UntilAsync(() => control.GetSnapshot().Workers == 1, "idle workers retire to MinWorkers");
        Assert.Equal(WorkerMode.Auto, control.GetSnapshot().Mode);
    }

    [Fact]
    public async Task Backlog_ManualCount_IsRespectedUntilReleased()
    {
        await using var harness = QueueHarness.Start(FastScaling);
        using var gate = new Gate();
        var queue = harness.Queue;
        var control = harness.Control;
        control.SetWorkerCount(2);
        for (int i = 0; i < 10; i++)
        {
            Assert.True(queue.TryEnqueue(gate.Block));
        }

        await Wait.ForAsync(gate.EnteredAsync(2), "two blocked jobs");

        // The queued jobs wait far beyond the 20 ms target; in manual mode nothing may be added.
        await Task.Delay(300);
        Assert.Equal(2, control.GetSnapshot().Workers);
        Assert.Equal(2, gate.Entered);

        control.UseAutoScaling();

        await Wait.ForAsync(gate.EnteredAsync(6), "the autoscaler to take over");
        gate.Open();
    }

    [Fact]
    public async Task Backlog_AutoScaleDisabled_StaysAtMinimum()
    {
        await using var harness = QueueHarness.Start(o => { FastScaling(o); o.AutoScale.Enabled = false; });
        using var gate = new Gate();
        for (int i = 0; i < 10; i++)
        {
            Assert.True(harness.Queue.TryEnqueue(gate.Block));
        }

        await Wait.ForAsync(gate.EnteredAsync(1), "the first blocked job");
        await Task.Delay(300);

        Assert.Equal(1, harness.Control.GetSnapshot().Workers);
        gate.Open();
    }
}
