namespace WorkQueue.AotSmoke;

/// <summary>A durable job's payload, stored in Redis as JSON through <see cref="SmokeJsonContext"/>.</summary>
internal sealed record Payment(string Id, decimal Amount, string Currency, DateTimeOffset At);
