using System.Diagnostics;
using WorkQueue.Internal;

namespace WorkQueue.Workers;

/// <summary>
/// What the pool needs from the layer below it to run jobs: the pool decides where and when an attempt runs, the
/// executor what it does and how it ends.
/// </summary>
internal interface IJobExecutor
{
    /// <summary>Called on a queue thread as an attempt is about to start.</summary>
    /// <returns><see langword="false"/> when the attempt must not start (the queue is abandoning; the job was reported).</returns>
    bool OnStarting(in WorkItem item, long startTimestamp);

    /// <summary>
    /// Starts the attempt's code on the calling thread, under the attempt's synchronization context; <paramref name="trace"/>
    /// is its span, current while the code runs, when someone listens.
    /// </summary>
    ValueTask Invoke(in WorkItem item, CancellationToken cancellationToken, out Activity? trace);

    /// <summary>Called once per attempt that was started and not claimed by the shutdown, with how it ended.</summary>
    void OnFinished(in WorkItem item, Exception? error, JobCancelReason cancelReason, TimeSpan elapsed, Activity? trace);
}
