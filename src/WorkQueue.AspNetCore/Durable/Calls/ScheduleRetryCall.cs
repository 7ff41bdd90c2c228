using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/scheduleRetry.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its
/// reply read, in one place. The store (<c>RedisStreamStore.Settling.cs</c>) and the model test call it alike.
/// </summary>
internal static class ScheduleRetryCall
{
    /// <summary>Moves a failed entry this consumer holds to the delayed set, due after <paramref name="delayMs"/> by Redis's clock.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="consumer">The consumer that holds the entry.</param>
    /// <param name="entry">The entry.</param>
    /// <param name="delayMs">The backoff before the next attempt.</param>
    /// <param name="error">The attempt's error, as the job's record keeps it (its separators become spaces).</param>
    /// <returns><see langword="true"/> when stored; <see langword="false"/> when another consumer owns the entry now.</returns>
    public static bool Run(IDatabase db, RedisStreamKeys keys, string consumer, in SettledEntry entry, long delayMs, string error) =>
        (long)db.ScriptEvaluate(DurableScripts.ScheduleRetry, Keys(keys), Arguments(keys, consumer, entry, delayMs, error)) == 1;

    /// <summary>KEYS: stream, delayed, epoch.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream, keys.Delayed, keys.Epoch];

    /// <summary>
    /// ARGV: group, consumer, stream id, delay ms, delayed-set member, job id, idempotency key, epoch, vanished, nudge
    /// channel, attempt, enqueued at, started at, error.
    /// </summary>
    public static RedisValue[] Arguments(RedisStreamKeys keys, string consumer, in SettledEntry entry, long delayMs, string error) =>
    [
        RedisStreamKeys.Group,
        consumer,
        entry.StreamId,
        delayMs,
        entry.RetryMember,
        entry.JobId,
        entry.KeyArgument,
        entry.Epoch,
        entry.VanishedArgument,
        keys.NudgeName,
        entry.Attempt,
        entry.EnqueuedAtMs,
        entry.StartedAtArgument,
        RecordText.Error(error),
    ];
}
