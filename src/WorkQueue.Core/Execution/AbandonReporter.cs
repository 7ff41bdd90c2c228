using Microsoft.Extensions.Logging;
using WorkQueue.Accounting;
using WorkQueue.Internal;

namespace WorkQueue.Execution;

/// <summary>
/// Reports an accepted job that will not complete because its queue stopped: counted in the ledger (which keeps it,
/// with its payload, for the <see cref="ShutdownReport"/>) and logged. Used by the queue's stop for what it finds
/// unstarted, not due or still running, and by an in-memory queue's outcomes for what the stop cut short.
/// </summary>
internal sealed partial class AbandonReporter
{
    private readonly string _queue;
    private readonly JobLedger _ledger;
    private readonly ILogger _logger;

    public AbandonReporter(string queue, JobLedger ledger, ILogger logger)
    {
        _queue = queue;
        _ledger = ledger;
        _logger = logger;
    }

    /// <summary>Reports an accepted job that will not complete (shutdown), with its payload in the report only.</summary>
    public void Report(WorkItem item, AbandonReason reason)
    {
        var job = new AbandonedJob(item.Describe(_queue), reason);
        if (!_ledger.Abandoned(job, item))
        {
            // Cancelled while it waited: it was counted then, and is not part of the report.
            return;
        }

        _logger.TryLog(static (l, s) => Log.JobAbandoned(l, s._queue, s.Id, s.Name, s.reason), (_queue, job.Job.Id, job.Job.Name, reason));
    }

    private static partial class Log
    {
        [LoggerMessage(104, LogLevel.Warning, "Queue '{Queue}': job {JobId} ({Job}) did not complete before shutdown: {Reason}. Its payload is in the ShutdownReport.", EventName = "JobAbandoned")]
        public static partial void JobAbandoned(ILogger logger, string queue, string jobId, string job, AbandonReason reason);
    }
}
