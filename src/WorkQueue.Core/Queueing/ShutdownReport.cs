namespace WorkQueue;

/// <summary>
/// Reports how a queue stopped: whether it drained, and every accepted job that did not complete.
/// </summary>
/// <param name="QueueName">The name of the queue.</param>
/// <param name="Drained"><see langword="true"/> when every accepted job finished before the deadline.</param>
/// <param name="Abandoned">The accepted jobs that did not complete, each with its reason.</param>
/// <param name="Elapsed">How long stopping took.</param>
public sealed record ShutdownReport(string QueueName, bool Drained, IReadOnlyList<AbandonedJob> Abandoned, TimeSpan Elapsed);
