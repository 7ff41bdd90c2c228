using System.Globalization;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.Durability;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// Scheduled jobs and recurring occurrences. A scheduled job travels with the enqueues of a round and waits in the
/// queue's delayed set (where retries wait) under its own job id until a consumer's fetch moves it to the stream when it
/// is due, on Redis's clock; consumers sleep until the earliest due time (each round tells them) and every enqueue nudges
/// them to look again. A recurring occurrence is an enqueue that Redis adds only if no instance added that occurrence.
/// </summary>
internal sealed partial class RedisStreamStore : IRecurringOccurrenceStore
{
    /// <summary>What the round answers for an occurrence of a job paused in the store; also the prefix of its field in <c>recurring</c>.</summary>
    private const string PausedAnswer = "~";

    /// <inheritdoc/>
    public bool CarriesOccurrencesOf(Type handlerType) => _types.TryGetOccurrences(handlerType, out _);

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
    public TimeSpan ClockOffset => _clock.Offset;

    /// <inheritdoc/>
    public async ValueTask<RecurringOffer> EnqueueOccurrenceAsync(RecurringOccurrence occurrence, Type handlerType, string schedule, CancellationToken cancellationToken)
    {
        if (!_types.TryGetOccurrences(handlerType, out var type))
        {
            throw new InvalidOperationException($"Durable queue '{_queue}': no job type runs {handlerType.FullName} with RecurringOccurrence payloads.");
        }

        string payload = _types.Write(type, type.WriteOccurrence(occurrence)!);

        // A manual trigger claims nothing: it runs besides the schedule (a paused job included).
        string spec = occurrence.IsTriggeredManually
            ? string.Empty
            : "r" + occurrence.ScheduledFor.ToUnixTimeMilliseconds().ToString(CultureInfo.InvariantCulture) + "|" + schedule + "|" + occurrence.RecurringJobId.ToLowerInvariant();
        string id;
        try
        {
            id = await EnqueueAsync(payload, spec, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is EnqueueOutcomeUnknownException or EnqueueNotReplicatedException)
        {
            // What the recurring jobs offer again: the occurrence's claim makes a repeat of a stored offer a no-op, and a
            // repeat the replicas acknowledge confirms the stored occurrence too (they acknowledge all the primary wrote).
            throw new JobRejectedException(_queue, RejectionReason.StoreUnavailable, ex.Message, ex);
        }

        return id switch
        {
            "" => new RecurringOffer(RecurringOfferOutcome.EnqueuedElsewhere),
            PausedAnswer => new RecurringOffer(RecurringOfferOutcome.Paused),
            ['-', .. var generation] => new RecurringOffer(RecurringOfferOutcome.Removed, Generation: ParseGeneration(generation)),
            ['^', .. var rest] => Superseded(rest),
            _ => new RecurringOffer(RecurringOfferOutcome.Enqueued, id),
        };

        // "{generation}|{schedule}": the job's schedule in the store, which is not the offered one.
        static RecurringOffer Superseded(string answer)
        {
            int bar = answer.IndexOf('|', StringComparison.Ordinal);
            return new RecurringOffer(RecurringOfferOutcome.Superseded, Generation: ParseGeneration(answer[..Math.Max(bar, 0)]), Schedule: answer[(bar + 1)..]);
        }
    }

    /// <inheritdoc/>
    public async ValueTask<RecurringScheduleRecord> SetScheduleAsync(string recurringJobId, RecurringScheduleChange change, string schedule, CancellationToken cancellationToken)
    {
        try
        {
            var sent = _clock.Start();
            var reply = await RegisterRecurringCall.RunAsync(Database, Keys, recurringJobId.ToLowerInvariant(), change, schedule).ConfigureAwait(false);
            _clock.Sample(sent, reply.RedisTimeMs);
            return new RecurringScheduleRecord(reply.Generation, reply.Change, reply.Schedule);
        }
        catch (Exception ex) when (ex is RedisException or TimeoutException)
        {
            throw new JobRejectedException(_queue, RejectionReason.StoreUnavailable, $"Durable queue '{_queue}': {ex.Message}", ex);
        }
    }

    private static long ParseGeneration(string text) =>
        long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out long generation) ? generation : 0;

    /// <inheritdoc/>
    public async ValueTask SetPausedAsync(string recurringJobId, bool paused, CancellationToken cancellationToken)
    {
        string field = PausedAnswer + recurringJobId.ToLowerInvariant();
        try
        {
            if (paused)
            {
                await Database.HashSetAsync(Keys.Recurring, field, "1").ConfigureAwait(false);
            }
            else
            {
                await Database.HashDeleteAsync(Keys.Recurring, field).ConfigureAwait(false);
            }
        }
        catch (Exception ex) when (ex is RedisException or TimeoutException)
        {
            throw new JobRejectedException(_queue, RejectionReason.StoreUnavailable, $"Durable queue '{_queue}': {ex.Message}", ex);
        }
    }

    /// <inheritdoc/>
    public async ValueTask<DateTimeOffset?> GetLastOccurrenceAsync(string recurringJobId, CancellationToken cancellationToken)
    {
        if (_unreachable)
        {
            var cause = _lastError;
            throw new JobRejectedException(_queue, RejectionReason.StoreUnavailable, $"Durable queue '{_queue}': Redis cannot be reached ({cause?.Message}).", cause);
        }

        try
        {
            var last = await Database.HashGetAsync(Keys.Recurring, recurringJobId.ToLowerInvariant()).ConfigureAwait(false);
            return last.IsNull ? null : DateTimeOffset.FromUnixTimeMilliseconds((long)last);
        }
        catch (Exception ex) when (ex is RedisException)
        {
            throw new JobRejectedException(_queue, RejectionReason.StoreUnavailable, $"Durable queue '{_queue}': {ex.Message}", ex);
        }
    }
}
