namespace WorkQueue;

/// <summary>
/// What an enqueue with <see cref="JobOptions"/> did.
/// </summary>
/// <param name="JobId">The new job's id, or, when <paramref name="Created"/> is <see langword="false"/>, the id of the job that holds the idempotency key.</param>
/// <param name="Created"><see langword="true"/> when a job was added; <see langword="false"/> when a job with the same idempotency key already held it.</param>
public readonly record struct EnqueueResult(string JobId, bool Created);
