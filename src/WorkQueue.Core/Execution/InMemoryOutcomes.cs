using WorkQueue.Accounting;
using WorkQueue.Internal;
using WorkQueue.Queueing;
using WorkQueue.Scheduling;
using WorkQueue.Workers;

namespace WorkQueue.Execution;

/// <summary>
/// The outcomes of an in-memory queue's jobs: retries wait in the <see cref="RetryScheduler"/>, dead letters are kept in
/// the <see cref="DeadLetterStore"/>, and what a stop cuts short is reported abandoned (the <see cref="ShutdownReport"/>
/// has it, with its payload).
/// </summary>
internal sealed class InMemoryOutcomes : IJobOutcomes
{
    private readonly JobLedger _ledger;
    private readonly RetryScheduler _retries;
    private readonly DeadLetterStore _deadLetters;
    private readonly AbandonReporter _abandoned;
    private readonly AbandonFlag _abandoning;

    public InMemoryOutcomes(JobLedger ledger, RetryScheduler retries, DeadLetterStore deadLetters, AbandonReporter abandoned, AbandonFlag abandoning)
    {
        _ledger = ledger;
        _retries = retries;
        _deadLetters = deadLetters;
        _abandoned = abandoned;
        _abandoning = abandoning;
    }

    /// <inheritdoc/>
    public bool CanRetry => !_abandoning.IsSet;

    /// <inheritdoc/>
    public bool TryStart(in WorkItem item) => true;

    /// <inheritdoc/>
    public void Succeeded(in WorkItem item) => _ledger.Succeeded(item);

    /// <inheritdoc/>
    public void Canceled(in WorkItem item) => _ledger.Canceled(item);

    /// <inheritdoc/>
    public void ScheduleRetry(in WorkItem item, TimeSpan delay, Exception error) => _retries.Schedule(item, delay);

    /// <inheritdoc/>
    public void DeadLettered(in WorkItem item, DeadLetteredJob job, Exception error)
    {
        // Kept before it is counted: whoever sees the count (a drain, a test) finds it among the dead letters.
        _deadLetters.Add(job);
        _ledger.DeadLettered(item);
    }

    /// <inheritdoc/>
    public void NotStarted(in WorkItem item) => _abandoned.Report(item, AbandonReason.NotStarted);

    /// <inheritdoc/>
    public void StoppedWhileRunning(in WorkItem item) => _abandoned.Report(item, AbandonReason.Canceled);
}
