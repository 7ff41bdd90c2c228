namespace WorkQueue;

/// <summary>
/// Specifies who decides how many workers a queue runs.
/// </summary>
public enum WorkerMode
{
    /// <summary>The autoscaler adds workers under backlog and idle workers retire, within the configured limits.</summary>
    Auto,

    /// <summary>A count set with <see cref="IWorkQueueControl.SetWorkerCount(int)"/> holds until <see cref="IWorkQueueControl.UseAutoScaling"/> is called.</summary>
    Manual,
}
