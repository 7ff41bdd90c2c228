namespace WorkQueue.DurableChaos;

/// <summary>The chaos queue's payload: the job's number, 1 to the number of jobs, which the handler records as it completes.</summary>
public sealed record ChaosJob(int N);
