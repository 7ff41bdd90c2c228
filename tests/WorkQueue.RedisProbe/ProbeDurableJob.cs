namespace WorkQueue.RedisProbe;

/// <summary>The payload of the probe's durable queue.</summary>
/// <param name="N">The job's number.</param>
internal sealed record ProbeDurableJob(int N);
