using WorkQueue.Durability;

namespace WorkQueue.Recurring;

/// <summary>
/// The engine's clock moved by the store's measured offset (<see cref="IRecurringOccurrenceStore.ClockOffset"/>): a
/// durable recurring job's occurrences fall due on the store's clock, so an instance whose clock runs ahead does not run
/// them early by its skew. Timers and timestamps are the engine's (durations do not depend on the offset); the offset is
/// read at each call, so it applies as soon as the store has measured it.
/// </summary>
internal sealed class RecurringStoreClock(TimeProvider engine, IRecurringOccurrenceStore store) : TimeProvider
{
    public override DateTimeOffset GetUtcNow() => engine.GetUtcNow() + store.ClockOffset;

    public override long GetTimestamp() => engine.GetTimestamp();

    public override long TimestampFrequency => engine.TimestampFrequency;

    public override TimeZoneInfo LocalTimeZone => engine.LocalTimeZone;

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period) =>
        engine.CreateTimer(callback, state, dueTime, period);
}
