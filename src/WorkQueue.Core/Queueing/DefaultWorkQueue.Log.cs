using Microsoft.Extensions.Logging;

namespace WorkQueue.Queueing;

internal sealed partial class DefaultWorkQueue
{
    private static partial class Log
    {
        [LoggerMessage(100, LogLevel.Information, "Queue '{Queue}' started: capacity {Capacity}, {Min}-{Max} workers, full mode {FullMode}.", EventName = "QueueStarted")]
        public static partial void Started(ILogger logger, string queue, int capacity, int min, int max, QueueFullMode fullMode);

        [LoggerMessage(101, LogLevel.Warning, "Queue '{Queue}': job {JobId} ({Job}) failed on attempt {Attempt} of {MaxAttempts}; retrying in {DelayMs:F0} ms.", EventName = "JobRetrying")]
        public static partial void JobRetrying(ILogger logger, Exception exception, string queue, long jobId, string job, int attempt, int maxAttempts, double delayMs);

        [LoggerMessage(102, LogLevel.Error, "Queue '{Queue}': job {JobId} ({Job}) failed on attempt {Attempt} and was dead-lettered.", EventName = "JobDeadLettered")]
        public static partial void JobDeadLettered(ILogger logger, Exception exception, string queue, long jobId, string job, int attempt);

        [LoggerMessage(103, LogLevel.Warning, "Queue '{Queue}': job {JobId} ({Job}) was dropped to make room (DropOldest).", EventName = "JobDropped")]
        public static partial void JobDropped(ILogger logger, string queue, long jobId, string job);

        [LoggerMessage(104, LogLevel.Warning, "Queue '{Queue}': job {JobId} ({Job}) did not complete before shutdown: {Reason}.", EventName = "JobAbandoned")]
        public static partial void JobAbandoned(ILogger logger, string queue, long jobId, string job, AbandonReason reason);

        [LoggerMessage(105, LogLevel.Error, "Queue '{Queue}': the {Callback} callback threw; ignored.", EventName = "CallbackFailed")]
        public static partial void CallbackFailed(ILogger logger, Exception exception, string queue, string callback);

        [LoggerMessage(106, LogLevel.Information, "Queue '{Queue}' stopping: {Depth} queued, {Busy} running.", EventName = "QueueStopping")]
        public static partial void Stopping(ILogger logger, string queue, int depth, int busy);

        [LoggerMessage(107, LogLevel.Information, "Queue '{Queue}' drained and stopped in {ElapsedMs:F0} ms.", EventName = "QueueDrained")]
        public static partial void Drained(ILogger logger, string queue, double elapsedMs);

        [LoggerMessage(108, LogLevel.Warning, "Queue '{Queue}' stopped after {ElapsedMs:F0} ms with {Count} job(s) not completed; see the shutdown report.", EventName = "QueueStoppedWithAbandoned")]
        public static partial void StoppedWithAbandoned(ILogger logger, string queue, int count, double elapsedMs);

        [LoggerMessage(109, LogLevel.Information, "Queue '{Queue}' paused.", EventName = "QueuePaused")]
        public static partial void Paused(ILogger logger, string queue);

        [LoggerMessage(110, LogLevel.Information, "Queue '{Queue}' resumed.", EventName = "QueueResumed")]
        public static partial void Resumed(ILogger logger, string queue);
    }
}
