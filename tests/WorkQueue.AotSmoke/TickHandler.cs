namespace WorkQueue.AotSmoke;

/// <summary>The recurring job (a six-field cron expression, read by Cronos): passes its check at its first occurrence.</summary>
internal sealed class TickHandler(SmokeLog log) : IJobHandler<RecurringOccurrence>
{
    public const string Id = "tick";

    public ValueTask ExecuteAsync(RecurringOccurrence payload, CancellationToken cancellationToken)
    {
        log.Check("recurring job ran", payload.RecurringJobId == Id, $"the occurrence names recurring job '{payload.RecurringJobId}', not '{Id}'");
        return ValueTask.CompletedTask;
    }
}
