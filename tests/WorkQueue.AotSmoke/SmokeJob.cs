namespace WorkQueue.AotSmoke;

/// <summary>An in-memory job's payload: the name its check waits for.</summary>
internal sealed record SmokeJob(string Name);
