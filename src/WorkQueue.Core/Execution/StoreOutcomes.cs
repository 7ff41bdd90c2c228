using WorkQueue.Accounting;
using WorkQueue.Durability;
using WorkQueue.Internal;

namespace WorkQueue.Execution;

/// <summary>
/// The outcomes of a durable queue's jobs: each goes to the <see cref="IJobStore"/>, which settles it in the store on
/// its own thread. A job that leaves the process that way (a stored retry, a job handed back) ends in the ledger as
/// returned; the cluster-wide truth is the store.
/// </summary>
internal sealed class StoreOutcomes : IJobOutcomes
{
    private readonly JobLedger _ledger;
    private readonly IJobStore _store;

    public StoreOutcomes(JobLedger ledger, IJobStore store)
    {
        _ledger = ledger;
        _store = store;
    }

    /// <inheritdoc/>
    public bool CanRetry => true;

    /// <inheritdoc/>
    public bool TryStart(in WorkItem item) => _store.TryStart(item);

    /// <inheritdoc/>
    public void Succeeded(in WorkItem item)
    {
        _ledger.Succeeded(item);
        _store.Completed(item);
    }

    /// <inheritdoc/>
    public void Canceled(in WorkItem item)
    {
        _ledger.Canceled(item);
        _store.Canceled(item);
    }

    /// <inheritdoc/>
    public void ScheduleRetry(in WorkItem item, TimeSpan delay, Exception error)
    {
        _ledger.Returned();
        _store.ScheduleRetry(item, delay, error);
    }

    /// <inheritdoc/>
    public void DeadLettered(in WorkItem item, DeadLetteredJob job, Exception error)
    {
        _ledger.DeadLettered(item);
        _store.DeadLetter(item, error);
    }

    /// <inheritdoc/>
    public void NotStarted(in WorkItem item) => HandBack(item);

    /// <inheritdoc/>
    public void StoppedWhileRunning(in WorkItem item) => HandBack(item);

    private void HandBack(in WorkItem item)
    {
        _ledger.Returned();
        _store.Release(item);
    }
}
