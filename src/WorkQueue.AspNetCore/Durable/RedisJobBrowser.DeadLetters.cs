using System.Globalization;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable.Calls;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The dead-letter stream, for operators (the admin endpoints): list, requeue, delete. Called on request threads with
/// async Redis calls; the queue's own thread is not involved.
/// </summary>
internal sealed partial class RedisJobBrowser
{
    /// <summary>Reads the newest dead letters first (without their payloads, which may hold personal data).</summary>
    public async Task<IReadOnlyList<DurableDeadLetter>> ReadDeadLettersAsync(int count)
    {
        var entries = await Database.StreamRangeAsync(_keys.Dead, "-", "+", count, Order.Descending).ConfigureAwait(false);
        return [.. entries.Select(ToDeadLetter)];
    }

    /// <summary>
    /// Puts a dead letter back on the queue as a new job (attempt 1), with its idempotency key if that is free, when the
    /// queue has room for it under its <see cref="WorkQueueOptions.Capacity"/> as an enqueue would (counted in the same
    /// script call); a full queue refuses it and the dead letter stays.
    /// </summary>
    public async Task<DeadLetterRequeue> RequeueDeadLetterAsync(string id) =>
        await RequeueCall.RunAsync(Database, _keys, id, _options.Capacity).ConfigureAwait(false);

    /// <summary>Gets the queue's capacity: its unfinished jobs in Redis, across all instances.</summary>
    public int Capacity => _options.Capacity;

    /// <summary>Deletes a dead letter; returns whether it existed.</summary>
    public async Task<bool> DeleteDeadLetterAsync(string id) =>
        await Database.StreamDeleteAsync(_keys.Dead, [id]).ConfigureAwait(false) == 1;

    private DurableDeadLetter ToDeadLetter(StreamEntry entry)
    {
        string error = (string?)entry["e"] ?? string.Empty;
        int colon = error.IndexOf(": ", StringComparison.Ordinal);
        return new DurableDeadLetter(
            entry.Id!,
            (string?)entry["j"] ?? entry.Id!,
            _types.NameOf((string?)entry["p"] ?? string.Empty),
            int.TryParse((string?)entry["a"], NumberStyles.None, CultureInfo.InvariantCulture, out int attempt) ? attempt : 1,
            colon > 0 && !error.AsSpan(0, colon).Contains(' ') ? error[..colon] : null,
            colon > 0 && !error.AsSpan(0, colon).Contains(' ') ? error[(colon + 2)..] : error,
            (string?)entry["r"] ?? "failed",
            FromUnixMs((string?)entry["f"]),
            FromUnixMs((string?)entry["t"]));
    }

    private static DateTimeOffset FromUnixMs(string? ms) =>
        long.TryParse(ms, NumberStyles.None, CultureInfo.InvariantCulture, out long value) ? DateTimeOffset.FromUnixTimeMilliseconds(value) : DateTimeOffset.UnixEpoch;
}

/// <summary>One entry of a durable queue's dead-letter stream.</summary>
internal sealed record DurableDeadLetter(
    string Id,
    string JobId,
    string Name,
    int Attempt,
    string? ErrorType,
    string ErrorMessage,
    string Reason,
    DateTimeOffset DeadLetteredAt,
    DateTimeOffset EnqueuedAt);
