using System.Globalization;
using WorkQueue.Durability;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// Scheduled jobs, and the recurring jobs' store the engine finds on the queue's store. A scheduled job travels with the
/// enqueues of a round and waits in the queue's delayed set (where retries wait) under its own job id until a consumer's
/// fetch moves it to the stream when it is due, on Redis's clock; consumers sleep until the earliest due time (each
/// round tells them) and every enqueue nudges them to look again. Recurring occurrences are
/// <see cref="RedisRecurringStore"/>'s: this store only hands the engine's calls to it.
/// </summary>
internal sealed partial class RedisStreamStore : IRecurringOccurrenceStore
{
    /// <summary>Stores a job that becomes ready after <paramref name="delay"/> on Redis's clock (now, if not positive).</summary>
    public ValueTask<string> ScheduleAsync(string payload, TimeSpan delay, CancellationToken cancellationToken) =>
        EnqueueAsync(payload, DelaySpec(delay), cancellationToken);

    /// <summary>Stores a job that becomes ready at <paramref name="runAt"/> by Redis's clock (now, if that has passed).</summary>
    public ValueTask<string> ScheduleAsync(string payload, DateTimeOffset runAt, CancellationToken cancellationToken) =>
        EnqueueAsync(payload, AtSpec(runAt), cancellationToken);

    /// <summary>The round's spec for a job ready after <paramref name="delay"/> (now, if not positive).</summary>
    internal static string DelaySpec(TimeSpan delay) =>
        delay <= TimeSpan.Zero ? string.Empty : "d" + ((long)Math.Ceiling(delay.TotalMilliseconds)).ToString(CultureInfo.InvariantCulture);

    /// <summary>The round's spec for a job ready at <paramref name="runAt"/> (now, if that has passed).</summary>
    internal static string AtSpec(DateTimeOffset runAt) =>
        "a" + Math.Max(0, runAt.ToUnixTimeMilliseconds()).ToString(CultureInfo.InvariantCulture);

    // The engine finds a queue's recurring store on the queue's IJobStore (WorkQueue.Core's RecurringJobManager).

    /// <inheritdoc/>
    TimeSpan IRecurringOccurrenceStore.ClockOffset => _recurring.ClockOffset;

    /// <inheritdoc/>
    bool IRecurringOccurrenceStore.CarriesOccurrencesOf(Type handlerType) => _recurring.CarriesOccurrencesOf(handlerType);

    /// <inheritdoc/>
    ValueTask<RecurringOffer> IRecurringOccurrenceStore.EnqueueOccurrenceAsync(RecurringOccurrence occurrence, Type handlerType, string schedule, CancellationToken cancellationToken) =>
        _recurring.EnqueueOccurrenceAsync(occurrence, handlerType, schedule, cancellationToken);

    /// <inheritdoc/>
    ValueTask<RecurringScheduleRecord> IRecurringOccurrenceStore.SetScheduleAsync(string recurringJobId, RecurringScheduleChange change, string schedule, CancellationToken cancellationToken) =>
        _recurring.SetScheduleAsync(recurringJobId, change, schedule, cancellationToken);

    /// <inheritdoc/>
    ValueTask IRecurringOccurrenceStore.SetPausedAsync(string recurringJobId, bool paused, CancellationToken cancellationToken) =>
        _recurring.SetPausedAsync(recurringJobId, paused, cancellationToken);

    /// <inheritdoc/>
    ValueTask<DateTimeOffset?> IRecurringOccurrenceStore.GetLastOccurrenceAsync(string recurringJobId, CancellationToken cancellationToken) =>
        _recurring.GetLastOccurrenceAsync(recurringJobId, cancellationToken);
}
