using WorkQueue.Timing;

namespace WorkQueue.Internal;

/// <summary>
/// Time and randomness as the engine sees them: by default timers on the engine's dedicated timer thread and the shared
/// random generator; tests register their own (a <c>FakeTimeProvider</c>, a fixed jitter) before <c>AddWorkQueue</c>.
/// </summary>
/// <param name="Time">The source of timestamps and timers.</param>
/// <param name="NextJitter">Returns a number in [0, 1) for retry jitter.</param>
internal sealed record WorkQueueEnvironment(TimeProvider Time, Func<double> NextJitter)
{
    public static WorkQueueEnvironment Default { get; } = new(EngineTimeProvider.Instance, Random.Shared.NextDouble);
}
