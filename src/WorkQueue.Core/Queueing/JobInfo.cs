namespace WorkQueue;

/// <summary>
/// Describes one accepted job when the queue reports it: dropped, dead-lettered or not run at shutdown.
/// </summary>
/// <param name="Id">The job's id, unique within its queue.</param>
/// <param name="QueueName">The name of the queue that accepted the job.</param>
/// <param name="Name">The handler type or delegate method that runs the job.</param>
/// <param name="Payload">The payload the job was enqueued with, or the delegate for delegate jobs.</param>
/// <param name="Attempt">The attempt the job was on (1 for the first run).</param>
public sealed record JobInfo(string Id, string QueueName, string Name, object? Payload, int Attempt);
