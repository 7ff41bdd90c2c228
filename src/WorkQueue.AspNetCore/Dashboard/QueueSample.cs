namespace WorkQueue.AspNetCore.Dashboard;

/// <summary>One queue's state at one sampling tick.</summary>
/// <param name="At">When the snapshot was taken.</param>
/// <param name="Snapshot">The snapshot.</param>
/// <param name="JobsPerSecond">Jobs that ended (succeeded or dead-lettered) per second since the previous tick; 0 for the first.</param>
internal sealed record QueueSample(DateTimeOffset At, WorkQueueSnapshot Snapshot, double JobsPerSecond);
