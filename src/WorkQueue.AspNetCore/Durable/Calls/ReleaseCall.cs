using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/release.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its reply
/// read, in one place. The store (<c>RedisStreamStore.Settling.cs</c>) and the model test call it alike.
/// </summary>
internal static class ReleaseCall
{
    /// <summary>The ARGV values before the entries.</summary>
    public const int HeadLength = 4;

    /// <summary>The ARGV values of each entry.</summary>
    public const int Stride = 8;

    /// <summary>
    /// Hands entries this consumer holds (or that Redis lost) back as new entries at the stream's end; one whose job a
    /// cancel was asked for ends as cancelled instead.
    /// </summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="consumer">The consumer that holds the entries.</param>
    /// <param name="entries">The entries.</param>
    /// <param name="finishedRetentionMs">How long a cancelled job's record is kept (0: not at all).</param>
    /// <returns>How many were handed back or ended; the others are owned by another consumer now.</returns>
    public static long Run(IDatabase db, RedisStreamKeys keys, string consumer, IReadOnlyList<SettledEntry> entries, long finishedRetentionMs) =>
        (long)db.ScriptEvaluate(DurableScripts.Release, Keys(keys), Arguments(keys, consumer, entries, finishedRetentionMs));

    /// <summary>KEYS: stream, epoch.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream, keys.Epoch];

    /// <summary>
    /// ARGV: group, consumer, nudge channel, finished-job retention ms, then per entry (<see cref="Stride"/> values):
    /// stream id, job id, payload, attempt, enqueued at, idempotency key, epoch, vanished.
    /// </summary>
    public static RedisValue[] Arguments(RedisStreamKeys keys, string consumer, IReadOnlyList<SettledEntry> entries, long finishedRetentionMs)
    {
        var args = new RedisValue[HeadLength + (entries.Count * Stride)];
        args[0] = RedisStreamKeys.Group;
        args[1] = consumer;
        args[2] = keys.NudgeName;
        args[3] = finishedRetentionMs;
        int i = HeadLength;
        foreach (var entry in entries)
        {
            args[i++] = entry.StreamId;
            args[i++] = entry.JobId;
            args[i++] = entry.Payload;
            args[i++] = entry.Attempt;
            args[i++] = entry.EnqueuedAtMs;
            args[i++] = entry.KeyArgument;
            args[i++] = entry.Epoch;
            args[i++] = entry.VanishedArgument;
        }

        return args;
    }
}
