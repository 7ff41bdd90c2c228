namespace WorkQueue.AspNetCore;

/// <summary>
/// What an enqueue on a durable queue with <see cref="JobOptions"/> did.
/// </summary>
/// <param name="JobId">
/// The new job's id, or, when <paramref name="Created"/> is <see langword="false"/>, the id of the job that holds the
/// idempotency key (a stream id, or <c>s{ms}-{n}</c> for a job that was scheduled).
/// </param>
/// <param name="Created"><see langword="true"/> when a job was stored; <see langword="false"/> when a job with the same idempotency key already held it.</param>
public readonly record struct DurableEnqueueResult(string JobId, bool Created);
