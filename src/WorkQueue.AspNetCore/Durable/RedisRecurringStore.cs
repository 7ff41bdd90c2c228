using System.Globalization;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.Durability;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The recurring jobs' store on a durable queue (<see cref="IRecurringOccurrenceStore"/>): a recurring occurrence is an
/// enqueue that Redis adds only if no instance added that occurrence (it travels with the round, through the queue's
/// consumer, like any enqueue); each job's schedule, generation, pause and last occurrence are kept in the queue's
/// <c>recurring</c> hash, written by script calls on the recurring jobs' threads. Times are Redis's, measured by the
/// queue's <see cref="RedisClockOffset"/>, which the consumer's rounds sample too.
/// </summary>
internal sealed class RedisRecurringStore : IRecurringOccurrenceStore
{
    /// <summary>What the round answers for an occurrence of a job paused in the store; also the prefix of its field in <c>recurring</c>.</summary>
    private const string PausedAnswer = "~";

    private readonly string _queue;
    private readonly RedisStreamKeys _keys;
    private readonly QueueJobTypes _types;
    private readonly RedisClockOffset _clock;
    private readonly Func<IDatabase> _database;
    private readonly Func<string, string, CancellationToken, ValueTask<string>> _enqueue;
    private readonly Func<bool> _unreachable;
    private readonly Func<Exception?> _lastError;

    /// <summary>Creates the recurring jobs' store of one durable queue.</summary>
    /// <param name="queue">The queue's name.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="types">The job types the queue carries (which handlers' occurrences it stores, and how).</param>
    /// <param name="clock">How far Redis's clock is from this process's, sampled by every call that answers Redis's time.</param>
    /// <param name="database">Gets the database, at each call.</param>
    /// <param name="enqueue">Enqueues a payload with a round's spec through the queue's consumer, answering the round's reply for it.</param>
    /// <param name="unreachable">Whether the consumer's last pass found Redis unreachable.</param>
    /// <param name="lastError">The consumer's last Redis error, if any.</param>
    public RedisRecurringStore(
        string queue,
        RedisStreamKeys keys,
        QueueJobTypes types,
        RedisClockOffset clock,
        Func<IDatabase> database,
        Func<string, string, CancellationToken, ValueTask<string>> enqueue,
        Func<bool> unreachable,
        Func<Exception?> lastError)
    {
        _queue = queue;
        _keys = keys;
        _types = types;
        _clock = clock;
        _database = database;
        _enqueue = enqueue;
        _unreachable = unreachable;
        _lastError = lastError;
    }

    private IDatabase Database => _database();

    /// <inheritdoc/>
    public bool CarriesOccurrencesOf(Type handlerType) => _types.TryGetOccurrences(handlerType, out _);

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
            id = await _enqueue(payload, spec, cancellationToken).ConfigureAwait(false);
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
            var reply = await RegisterRecurringCall.RunAsync(Database, _keys, recurringJobId.ToLowerInvariant(), change, schedule).ConfigureAwait(false);
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
                await Database.HashSetAsync(_keys.Recurring, field, "1").ConfigureAwait(false);
            }
            else
            {
                await Database.HashDeleteAsync(_keys.Recurring, field).ConfigureAwait(false);
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
        if (_unreachable())
        {
            var cause = _lastError();
            throw new JobRejectedException(_queue, RejectionReason.StoreUnavailable, $"Durable queue '{_queue}': Redis cannot be reached ({cause?.Message}).", cause);
        }

        try
        {
            var last = await Database.HashGetAsync(_keys.Recurring, recurringJobId.ToLowerInvariant()).ConfigureAwait(false);
            return last.IsNull ? null : DateTimeOffset.FromUnixTimeMilliseconds((long)last);
        }
        catch (Exception ex) when (ex is RedisException)
        {
            throw new JobRejectedException(_queue, RejectionReason.StoreUnavailable, $"Durable queue '{_queue}': {ex.Message}", ex);
        }
    }
}
