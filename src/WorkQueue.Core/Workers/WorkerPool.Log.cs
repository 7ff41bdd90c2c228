using Microsoft.Extensions.Logging;

namespace WorkQueue.Workers;

internal sealed partial class WorkerPool
{
    private static partial class Log
    {
        [LoggerMessage(8, LogLevel.Warning, "Queue '{Queue}': a job of type {Job} blocked its thread on async code (sync-over-async such as .Result or .Wait() on a method that does not use ConfigureAwait(false)): its thread waited inside the job's synchronous part while a continuation of the job, posted from another thread, was pending, and the continuation was resumed on another thread so the job could finish. Logged once per job type; see the workqueue.job.sync_over_async counter.", EventName = "SyncOverAsync")]
        public static partial void SyncPartPost(ILogger logger, string queue, string job);

        [LoggerMessage(9, LogLevel.Warning, "Queue '{Queue}': every thread was busy in job code (among them a job of type {Job}) while continuations of async jobs waited: a job blocking on async code after it yielded, or long blocking work. A thread is added while under MaxWorkers. Logged once per job type; see the workqueue.job.sync_over_async counter.", EventName = "ThreadsBlocked")]
        public static partial void BlockedThreads(ILogger logger, string queue, string job);

        [LoggerMessage(1, LogLevel.Information, "Queue '{Queue}': worker count set manually to {Count}.", EventName = "ManualWorkerCount")]
        public static partial void ManualCount(ILogger logger, string queue, int count);

        [LoggerMessage(2, LogLevel.Information, "Queue '{Queue}': worker count handed back to the autoscaler.", EventName = "AutoWorkerCount")]
        public static partial void AutoMode(ILogger logger, string queue);

        [LoggerMessage(3, LogLevel.Debug, "Queue '{Queue}': worker {Worker} retired; {Count} left.", EventName = "WorkerRetired")]
        public static partial void WorkerRetired(ILogger logger, string queue, string worker, int count);

        [LoggerMessage(4, LogLevel.Critical, "Queue '{Queue}': worker {Worker} faulted outside any job.", EventName = "WorkerFaulted")]
        public static partial void WorkerFaulted(ILogger logger, Exception exception, string queue, string worker);

        [LoggerMessage(5, LogLevel.Error, "Queue '{Queue}': bookkeeping after a job failed (a logger or metrics listener threw); the job was already accounted for.", EventName = "BookkeepingFailed")]
        public static partial void BookkeepingFailed(ILogger logger, Exception exception, string queue);

        [LoggerMessage(6, LogLevel.Warning, "Queue '{Queue}': job {JobId} ({Job}) is stuck: running for {RunningMs:F0} ms; it {Reason}.", EventName = "JobStuck")]
        public static partial void JobStuck(ILogger logger, string queue, long jobId, string job, double runningMs, string reason);

        [LoggerMessage(7, LogLevel.Information, "Queue '{Queue}': added a thread ({Count} now) because {Waiting} continuation(s) waited while every thread was busy.", EventName = "ThreadAdded")]
        public static partial void ThreadAdded(ILogger logger, string queue, int count, int waiting);

        [LoggerMessage(10, LogLevel.Error, "Queue '{Queue}': the pool's monitor failed (a logger or metrics listener threw); it carries on.", EventName = "MonitorFailed")]
        public static partial void MonitorFailed(ILogger logger, Exception exception, string queue);
    }
}
