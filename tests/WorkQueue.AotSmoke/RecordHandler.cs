namespace WorkQueue.AotSmoke;

/// <summary>
/// Passes the check its job is named after. Not registered in the container: WorkQueue builds it from its public
/// constructor (ActivatorUtilities), the path whose constructor the trimmer must keep.
/// </summary>
internal sealed class RecordHandler(SmokeLog log) : IJobHandler<SmokeJob>
{
    public ValueTask ExecuteAsync(SmokeJob payload, CancellationToken cancellationToken)
    {
        log.Pass($"job ran: {payload.Name}");
        return ValueTask.CompletedTask;
    }
}
