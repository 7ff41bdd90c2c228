namespace WorkQueue.Dashboard.Tests.TestSupport;

/// <summary>The test host's recurring job: counts its runs.</summary>
public sealed class NightlyReport(NightlyReport.Runs runs) : IJobHandler<RecurringOccurrence>
{
    public const string Id = "nightly-report";

    public ValueTask ExecuteAsync(RecurringOccurrence payload, CancellationToken cancellationToken)
    {
        runs.Add();
        return ValueTask.CompletedTask;
    }

    public sealed class Runs
    {
        private int _count;

        public int Count => Volatile.Read(ref _count);

        public void Add() => Interlocked.Increment(ref _count);
    }
}
