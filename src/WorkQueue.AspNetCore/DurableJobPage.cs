namespace WorkQueue.AspNetCore;

/// <summary>A page of a durable queue's job search (<see cref="IDurableQueue{TPayload}.FindJobsAsync(JobQuery, CancellationToken)"/>).</summary>
/// <param name="Jobs">The jobs of this page, in the search's order (see <see cref="IDurableQueue{TPayload}.FindJobsAsync(JobQuery, CancellationToken)"/>).</param>
/// <param name="Next">The cursor of the next page (<see cref="JobQuery.Cursor"/>), or <see langword="null"/> when the search read everything.</param>
/// <param name="Scanned">How many entries this page read in Redis: a text search that matched few of them says so here.</param>
public sealed record DurableJobPage(IReadOnlyList<DurableJobStatus> Jobs, string? Next, int Scanned);
