namespace WorkQueue;

/// <summary>
/// A running job that has not returned long after it should have: it outlived its <see cref="WorkQueueOptions.JobTimeout"/>
/// (or, without one, <see cref="WorkQueueOptions.StuckJobThreshold"/>), or every thread of its queue is blocked while
/// work waits for one.
/// </summary>
/// <param name="Id">The job's id, unique within its queue.</param>
/// <param name="QueueName">The queue's name.</param>
/// <param name="Name">The handler type or delegate method that runs the job.</param>
/// <param name="Attempt">The attempt that is running (1 for the first run).</param>
/// <param name="RunningFor">How long the attempt has been running.</param>
/// <param name="Reason">Why it is reported.</param>
public sealed record StuckJob(string Id, string QueueName, string Name, int Attempt, TimeSpan RunningFor, string Reason);
