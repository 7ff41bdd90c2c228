namespace WorkQueue.AspNetCore.Durable;

/// <summary>A scheduled job waiting in Redis for its time.</summary>
/// <param name="Id">The job's id (<c>s{ms}-{n}</c>), which it keeps once it runs.</param>
/// <param name="Name">The queue's handler.</param>
/// <param name="DueAt">When it becomes ready, by Redis's clock.</param>
/// <param name="ScheduledAt">When it was stored, by Redis's clock.</param>
/// <param name="Payload">The payload as stored (JSON).</param>
internal sealed record DurableScheduledJob(string Id, string Name, DateTimeOffset DueAt, DateTimeOffset ScheduledAt, string Payload);
