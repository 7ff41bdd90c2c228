namespace WorkQueue.AspNetCore.Durable;

/// <summary>A page of a durable queue's job search: its jobs, the cursor of the next page (none at the end), and how many entries were examined.</summary>
internal sealed record DurableJobPage(IReadOnlyList<DurableJobStatus> Jobs, string? Next, int Scanned);
