namespace WorkQueue.RedisProbe;

/// <summary>The probe's durable jobs: counts them down; the last one sets an event the main thread waits on without the pool.</summary>
/// <param name="countdown">The shared countdown.</param>
internal sealed class ProbeDurableHandler(CountdownEvent countdown) : IJobHandler<ProbeDurableJob>
{
    public ValueTask ExecuteAsync(ProbeDurableJob payload, CancellationToken cancellationToken)
    {
        countdown.Signal();
        return default;
    }
}
