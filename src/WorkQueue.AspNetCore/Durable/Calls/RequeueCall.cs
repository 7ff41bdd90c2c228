using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/requeue.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its reply read
/// (a <see cref="DeadLetterRequeue"/>), in one place. The job browser (<c>RedisJobBrowser.DeadLetters.cs</c>) and the
/// model test call it alike.
/// </summary>
internal static class RequeueCall
{
    /// <summary>The script's answer when the queue has no room (nothing written).</summary>
    private const string NoRoom = "#";

    /// <summary>Puts a dead letter back on the queue as a new job (attempt 1), if the queue has room under <paramref name="capacity"/>.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="deadLetterId">The dead letter's id in the dead-letter stream.</param>
    /// <param name="capacity">The queue's capacity (its unfinished jobs in Redis).</param>
    /// <returns>The new stream id; or the queue was full; or there was no such dead letter.</returns>
    public static async Task<DeadLetterRequeue> RunAsync(IDatabase db, RedisStreamKeys keys, string deadLetterId, long capacity) =>
        Read(await db.ScriptEvaluateAsync(DurableScripts.Requeue, Keys(keys), Arguments(keys, deadLetterId, capacity)).ConfigureAwait(false));

    /// <summary>The same call, synchronously: the model test drives the scripts one call at a time.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="deadLetterId">The dead letter's id in the dead-letter stream.</param>
    /// <param name="capacity">The queue's capacity (its unfinished jobs in Redis).</param>
    /// <returns>The new stream id; or the queue was full; or there was no such dead letter.</returns>
    public static DeadLetterRequeue Run(IDatabase db, RedisStreamKeys keys, string deadLetterId, long capacity) =>
        Read(db.ScriptEvaluate(DurableScripts.Requeue, Keys(keys), Arguments(keys, deadLetterId, capacity)));

    /// <summary>KEYS: stream, dead, delayed, scheduled.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream, keys.Dead, keys.Delayed, keys.Scheduled];

    /// <summary>ARGV: group, dead-letter id, nudge channel, capacity.</summary>
    public static RedisValue[] Arguments(RedisStreamKeys keys, string deadLetterId, long capacity) =>
    [
        RedisStreamKeys.Group,
        deadLetterId,
        keys.NudgeName,
        capacity,
    ];

    /// <summary>Reads the reply: the new stream id, <c>#</c> when the queue has no room, nil when there is no such dead letter.</summary>
    public static DeadLetterRequeue Read(RedisResult reply)
    {
        string? newId = reply.IsNull ? null : (string?)reply;
        return newId == NoRoom ? new DeadLetterRequeue(null, QueueFull: true) : new DeadLetterRequeue(newId, QueueFull: false);
    }
}
