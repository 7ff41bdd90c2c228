namespace WorkQueue.Scheduling;

/// <summary>What became of a job offered to a <see cref="ScheduledJobSet"/>.</summary>
internal enum ScheduleResult
{
    /// <summary>It waits for its time.</summary>
    Scheduled,

    /// <summary>Its time had passed: it went to the queue's threads at once.</summary>
    Due,

    /// <summary>The set holds its <see cref="WorkQueueOptions.MaxScheduledJobs"/>.</summary>
    Full,

    /// <summary>The queue is stopping.</summary>
    Closed,
}
