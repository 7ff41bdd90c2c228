namespace WorkQueue.AspNetCore.Tests.TestSupport;

/// <summary>
/// The durable tests' producer of <see cref="TestJob"/>s: a queue's <see cref="IWorkQueue"/>, the one producer every queue
/// has, with the handler's type arguments written once and each enqueue answering its job id.
/// </summary>
internal sealed class TestJobQueue(IWorkQueue queue)
{
    public string Name => queue.Name;

    public async ValueTask<string> EnqueueAsync(TestJob job, CancellationToken cancellationToken = default) =>
        (await queue.EnqueueAsync<TestJobHandler, TestJob>(job, new JobOptions(), cancellationToken)).JobId;

    public ValueTask<EnqueueResult> EnqueueAsync(TestJob job, JobOptions options, CancellationToken cancellationToken = default) =>
        queue.EnqueueAsync<TestJobHandler, TestJob>(job, options, cancellationToken);

    public ValueTask<string> ScheduleAsync(TestJob job, TimeSpan delay, CancellationToken cancellationToken = default) =>
        queue.ScheduleAsync<TestJobHandler, TestJob>(job, delay, cancellationToken);

    public ValueTask<string> ScheduleAsync(TestJob job, DateTimeOffset runAt, CancellationToken cancellationToken = default) =>
        queue.ScheduleAsync<TestJobHandler, TestJob>(job, runAt, cancellationToken);

    public ValueTask<bool> CancelScheduledAsync(string jobId, CancellationToken cancellationToken = default) =>
        queue.CancelScheduledAsync(jobId, cancellationToken);

    public ValueTask<JobStatus?> GetJobAsync(string jobId, CancellationToken cancellationToken = default) =>
        queue.GetJobAsync(jobId, cancellationToken);

    public ValueTask<JobCancelResult> CancelAsync(string jobId, CancellationToken cancellationToken = default) =>
        queue.CancelAsync(jobId, cancellationToken);

    public ValueTask<JobPage> FindJobsAsync(JobQuery query, CancellationToken cancellationToken = default) =>
        queue.FindJobsAsync(query, cancellationToken);
}
