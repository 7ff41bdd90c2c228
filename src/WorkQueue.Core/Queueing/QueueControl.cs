namespace WorkQueue.Queueing;

/// <summary>The control side of a queue, kept apart from its producer side.</summary>
internal sealed class QueueControl(QueueRuntime runtime) : IWorkQueueControl
{
    public string Name => runtime.Name;

    public WorkQueueSnapshot GetSnapshot() => runtime.GetSnapshot();

    public IReadOnlyList<DeadLetteredJob> GetDeadLetters() => runtime.DeadLetters.ToList();

    public void SetWorkerCount(int count)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(count, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(count, runtime.Options.MaxWorkers);
        runtime.Pool.SetManual(count);
    }

    public void UseAutoScaling() => runtime.Pool.SetAuto();

    public IReadOnlyList<ScheduledJob> GetScheduledJobs(int maxCount)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(maxCount);
        return runtime.GetScheduledJobs(maxCount);
    }

    public void Pause() => runtime.Pause();

    public void Resume() => runtime.Resume();

    public Task<ShutdownReport> StopAsync(TimeSpan drainTimeout, CancellationToken cancellationToken = default) =>
        runtime.Owner.StopQueueAsync(runtime, drainTimeout, cancellationToken);
}
