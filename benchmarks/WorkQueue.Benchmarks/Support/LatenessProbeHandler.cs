namespace WorkQueue.Benchmarks.Support;

/// <summary>A typed job whose first line tells a <see cref="LatenessProbe"/> that it started.</summary>
/// <param name="probe">The probe; the payload's id is the sample's job id.</param>
public sealed class LatenessProbeHandler(LatenessProbe probe) : IJobHandler<Order>
{
    /// <inheritdoc/>
    public ValueTask ExecuteAsync(Order payload, CancellationToken cancellationToken)
    {
        probe.Hit(payload.Id);
        return default;
    }
}
