using System.Globalization;
using WorkQueue.Durability;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// Scheduled jobs, and the recurring jobs' store the engine finds on the queue's store. A scheduled job travels with the
/// enqueues of a round and waits in the queue's delayed set (where retries wait) under its own job id until a consumer's
/// fetch moves it to the stream when it is due, on Redis's clock; consumers sleep until the earliest due time (each
/// round tells them) and every enqueue nudges them to look again. Recurring occurrences are
/// <see cref="RedisRecurringStore"/>'s, which the engine reaches through <see cref="Recurring"/>.
/// </summary>
internal sealed partial class RedisStreamStore
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

    /// <inheritdoc/>
    public IRecurringOccurrenceStore Recurring => _recurring;
}
