namespace WorkQueue;

/// <summary>
/// A point-in-time view of one queue: its backlog, its workers, its totals and its recent latencies.
/// </summary>
/// <remarks>Fields are read one after another without a lock, so under load they may be a few jobs apart.</remarks>
public sealed record WorkQueueSnapshot
{
    /// <summary>Gets the queue's name.</summary>
    public required string Name { get; init; }

    /// <summary>Gets the number of jobs waiting to start.</summary>
    public required int Depth { get; init; }

    /// <summary>Gets the most jobs the queue holds.</summary>
    public required int Capacity { get; init; }

    /// <summary>Gets what happens to a job enqueued while the queue is full.</summary>
    public required QueueFullMode FullMode { get; init; }

    /// <summary>Gets the number of the queue's dedicated threads alive now.</summary>
    public required int Workers { get; init; }

    /// <summary>Gets the number of threads executing job code now (starting a job or running one of its continuations).</summary>
    public required int BusyWorkers { get; init; }

    /// <summary>Gets the number of threads the pool is heading for.</summary>
    public required int TargetWorkers { get; init; }

    /// <summary>Gets the fewest threads kept in automatic mode.</summary>
    public required int MinWorkers { get; init; }

    /// <summary>Gets the most threads the pool may run.</summary>
    public required int MaxWorkers { get; init; }

    /// <summary>Gets the number of jobs running now: started and not yet ended, including async jobs that hold no thread while they await.</summary>
    public required int RunningJobs { get; init; }

    /// <summary>Gets the most jobs that may run at once now: <see cref="WorkQueueOptions.MaxConcurrency"/>, or the thread count when it is not set.</summary>
    public required int MaxConcurrency { get; init; }

    /// <summary>Gets the number of continuations of running async jobs waiting for a free thread.</summary>
    public required int WaitingContinuations { get; init; }

    /// <summary>Gets who decides the worker count.</summary>
    public required WorkerMode Mode { get; init; }

    /// <summary>Gets a value indicating whether workers are paused (jobs are accepted but not started).</summary>
    public required bool IsPaused { get; init; }

    /// <summary>Gets a value indicating whether the queue still accepts jobs.</summary>
    public required bool IsAccepting { get; init; }

    /// <summary>Gets the running totals since the queue was created.</summary>
    public required WorkQueueTotals Totals { get; init; }

    /// <summary>Gets percentiles of how long recent jobs waited between enqueue and start.</summary>
    public required LatencySummary QueueWait { get; init; }

    /// <summary>Gets percentiles of how long recent job attempts ran.</summary>
    public required LatencySummary RunTime { get; init; }

    /// <summary>Gets the running jobs that are reported as stuck (see <see cref="StuckJob"/>).</summary>
    public required IReadOnlyList<StuckJob> StuckJobs { get; init; }

    /// <summary>Gets the number of scheduled jobs waiting for their time (in-memory queues; see <see cref="IWorkQueue.ScheduleAsync{THandler, TPayload}(TPayload, DateTimeOffset, CancellationToken)"/>).</summary>
    public int Scheduled { get; init; }

    /// <summary>
    /// Gets a durable queue's consumer and cluster-wide figures from its store, or <see langword="null"/> for a queue
    /// that keeps its jobs in memory. For a durable queue the other figures are this process's: <see cref="Depth"/> is
    /// its prefetch, <see cref="Totals"/> count the jobs it fetched.
    /// </summary>
    public DurableQueueSnapshot? Durable { get; init; }
}
