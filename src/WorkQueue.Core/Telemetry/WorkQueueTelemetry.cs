namespace WorkQueue;

/// <summary>
/// The names to subscribe to for WorkQueue's metrics and traces, for example with OpenTelemetry:
/// <c>.WithMetrics(m => m.AddMeter(WorkQueueTelemetry.MeterName))</c> and
/// <c>.WithTracing(t => t.AddSource(WorkQueueTelemetry.ActivitySourceName))</c>.
/// </summary>
public static class WorkQueueTelemetry
{
    /// <summary>The name of the meter (<c>System.Diagnostics.Metrics</c>) every queue reports through.</summary>
    public const string MeterName = "WorkQueue";

    /// <summary>
    /// The name of the activity source (<c>System.Diagnostics</c>): one span per job attempt, a child of the activity that
    /// was current when the job was enqueued, tagged with the queue, job id, job name, attempt and outcome.
    /// </summary>
    public const string ActivitySourceName = "WorkQueue";
}
