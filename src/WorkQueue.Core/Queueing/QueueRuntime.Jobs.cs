using WorkQueue.Internal;
using WorkQueue.Tracking;

namespace WorkQueue.Queueing;

/// <summary>A queue's jobs by id: status and cancel (in-memory queues).</summary>
internal sealed partial class QueueRuntime
{
    public JobStatus? GetJob(string jobId)
    {
        ArgumentNullException.ThrowIfNull(jobId);
        return Store is null && JobIds.TryParse(jobId, out long id) && Tracker.Find(id) is { } job ? job.Describe(Name) : null;
    }

    public JobPage FindJobs(JobQuery query) =>
        Store is null ? Tracker.Query(query, Name) : new JobPage([], Next: null, Scanned: 0);

    public JobCancelResult Cancel(string jobId)
    {
        ArgumentNullException.ThrowIfNull(jobId);
        if (Store is not null || !JobIds.TryParse(jobId, out long id) || Tracker.Find(id) is not { } job)
        {
            return new JobCancelResult(JobCancelOutcome.NotFound, null);
        }

        while (true)
        {
            var state = job.State;
            if (TrackedJob.IsEnding(state))
            {
                return new JobCancelResult(JobCancelOutcome.AlreadyFinished, job.Describe(Name));
            }

            if (state != JobState.Running)
            {
                if (!Ledger.CanceledBeforeStart(job))
                {
                    // It started or ended meanwhile: look again.
                    continue;
                }

                // Counted and its key released; what is left is tidying. A scheduled job leaves the set (freeing its
                // MaxScheduledJobs slot), a retry its timer; a queued one stays in the channel until a thread reaches
                // it and drops it (JobRunner.OnStarting). Whatever came due meanwhile is dropped the same way.
                if (state == JobState.Scheduled)
                {
                    _scheduled.TryCancel(id);
                }
                else if (state == JobState.Retrying)
                {
                    _retries.TryRemove(id);
                }

                TryLog(() => _metrics.Canceled(MetricTag));
                return new JobCancelResult(JobCancelOutcome.Canceled, job.Describe(Name));
            }

            job.RequestCancel();

            // The attempt may have failed and turned Retrying as the flag was set; the runner or this loop cancels it.
            if (job.State != JobState.Retrying)
            {
                return new JobCancelResult(JobCancelOutcome.CancelRequested, job.Describe(Name));
            }
        }
    }

    /// <summary>
    /// Hands the threads a scheduled job that came due or a retry whose delay passed, unless it was cancelled while it
    /// waited (then it was counted already, and is dropped here).
    /// </summary>
    private void HandDue(WorkItem item)
    {
        if (item.Tracked is { } tracked && !tracked.TryMarkQueued())
        {
            return;
        }

        Pool.EnqueueDue(item);
    }
}
