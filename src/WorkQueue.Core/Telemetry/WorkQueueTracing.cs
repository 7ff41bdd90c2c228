using System.Diagnostics;
using WorkQueue.Durability;
using WorkQueue.Internal;

namespace WorkQueue.Telemetry;

/// <summary>
/// The <c>WorkQueue</c> activity source: one span per job attempt, whose parent is the activity that was current when
/// the job was enqueued (for a durable job, its context as stored with the job, see <see cref="IStoredJob"/>).
/// Nothing is captured or allocated while nobody listens.
/// </summary>
internal static class WorkQueueTracing
{
    public const string QueueTag = WorkQueueMetrics.QueueTag;
    public const string JobIdTag = "workqueue.job.id";
    public const string JobNameTag = "workqueue.job.name";
    public const string AttemptTag = "workqueue.job.attempt";
    public const string OutcomeTag = WorkQueueMetrics.OutcomeTag;

    private static readonly ActivitySource s_source = new(WorkQueueTelemetry.ActivitySourceName, typeof(WorkQueueTracing).Assembly.GetName().Version?.ToString());

    /// <summary>Gets the current activity to carry in a work item, when someone listens; otherwise <see langword="null"/>.</summary>
    public static Activity? CaptureParent() => s_source.HasListeners() ? Activity.Current : null;

    /// <summary>Starts the span of one job attempt (and makes it current), when someone listens.</summary>
    public static Activity? StartJob(string queue, in WorkItem item)
    {
        if (!s_source.HasListeners())
        {
            return null;
        }

        var stored = item.Target as IStoredJob;
        var parent = item.Parent?.Context ?? stored?.TraceParent ?? default;
        var activity = s_source.StartActivity($"{queue} process", ActivityKind.Consumer, parent);
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag(QueueTag, queue);
            activity.SetTag(JobIdTag, stored is null ? item.Id : stored.JobId);
            activity.SetTag(JobNameTag, item.Invoker.Describe(item.Target));
            activity.SetTag(AttemptTag, item.Attempt);
        }

        return activity;
    }

    /// <summary>Ends a job attempt's span with its outcome, and the exception when it failed.</summary>
    public static void StopJob(Activity? activity, string outcome, Exception? error)
    {
        if (activity is null)
        {
            return;
        }

        activity.SetTag(OutcomeTag, outcome);
        if (error is not null)
        {
            activity.AddException(error);
            activity.SetStatus(ActivityStatusCode.Error, error.Message);
        }

        activity.Stop();
    }
}
