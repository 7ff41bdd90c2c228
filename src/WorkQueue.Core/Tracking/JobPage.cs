namespace WorkQueue;

/// <summary>
/// One page of jobs found by <see cref="IWorkQueue.FindJobsAsync(JobQuery, CancellationToken)"/>.
/// </summary>
/// <param name="Jobs">The jobs on this page: those in flight first (latest accepted first), then ended ones (latest ending first).</param>
/// <param name="Next">
/// The <see cref="JobQuery.Cursor"/> that continues after this page, or <see langword="null"/> when nothing is left to
/// read. A page that stopped at its <see cref="JobQuery.ScanLimit"/> returns one even if it is empty.
/// </param>
/// <param name="Scanned">How many jobs the query read to fill this page.</param>
public sealed record JobPage(IReadOnlyList<JobStatus> Jobs, string? Next, int Scanned);
