using StackExchange.Redis;
using WorkQueue.Durability;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/registerRecurring.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its
/// reply read (<see cref="RegisterRecurringReply"/>), in one place. The recurring store (<c>RedisRecurringStore.cs</c>)
/// and the model test call it alike.
/// </summary>
internal static class RegisterRecurringCall
{
    /// <summary>Writes a change of a recurring job's shared schedule, as the script decides (see its header).</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="recurringJobId">The recurring job's id, as the recurring hash names it.</param>
    /// <param name="change">The change: registered in code, changed or removed at runtime.</param>
    /// <param name="schedule">The instance's schedule.</param>
    /// <returns>The schedule as it is now, and Redis's time.</returns>
    public static async Task<RegisterRecurringReply> RunAsync(IDatabase db, RedisStreamKeys keys, string recurringJobId, RecurringScheduleChange change, string schedule) =>
        RegisterRecurringReply.Read(await db.ScriptEvaluateAsync(DurableScripts.RegisterRecurring, Keys(keys), Arguments(recurringJobId, change, schedule)).ConfigureAwait(false));

    /// <summary>The same call, synchronously: the model test drives the scripts one call at a time.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="recurringJobId">The recurring job's id, as the recurring hash names it.</param>
    /// <param name="change">The change: registered in code, changed or removed at runtime.</param>
    /// <param name="schedule">The instance's schedule.</param>
    /// <returns>The schedule as it is now, and Redis's time.</returns>
    public static RegisterRecurringReply Run(IDatabase db, RedisStreamKeys keys, string recurringJobId, RecurringScheduleChange change, string schedule) =>
        RegisterRecurringReply.Read(db.ScriptEvaluate(DurableScripts.RegisterRecurring, Keys(keys), Arguments(recurringJobId, change, schedule)));

    /// <summary>KEYS: recurring.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Recurring];

    /// <summary>ARGV: the job's id, the change (<c>c</c>, <c>r</c> or <c>x</c>), the instance's schedule.</summary>
    public static RedisValue[] Arguments(string recurringJobId, RecurringScheduleChange change, string schedule) =>
    [
        recurringJobId,
        RegisterRecurringReply.Code(change),
        schedule,
    ];
}

/// <summary><c>registerRecurring.lua</c>'s reply, read: <c>{ generation, state, schedule, Redis's time }</c>.</summary>
/// <param name="Generation">The schedule's generation (incremented by every write).</param>
/// <param name="State">The state letter: <c>c</c> registered in code, <c>r</c> changed, <c>x</c> removed at runtime.</param>
/// <param name="Schedule">The schedule the job runs on (for <c>x</c>, the one removed).</param>
/// <param name="RedisTimeMs">Redis's time when it answered (Unix ms).</param>
internal readonly record struct RegisterRecurringReply(long Generation, string State, string Schedule, long RedisTimeMs)
{
    /// <summary>Gets the change the state letter stands for.</summary>
    public RecurringScheduleChange Change => State switch
    {
        "c" => RecurringScheduleChange.Registered,
        "r" => RecurringScheduleChange.Changed,
        _ => RecurringScheduleChange.Removed,
    };

    /// <summary>The letter a change is written with.</summary>
    public static string Code(RecurringScheduleChange change) => change switch
    {
        RecurringScheduleChange.Registered => "c",
        RecurringScheduleChange.Changed => "r",
        _ => "x",
    };

    /// <summary>Reads a reply of <c>registerRecurring.lua</c>.</summary>
    public static RegisterRecurringReply Read(RedisResult reply)
    {
        var parts = (RedisResult[])reply!;
        return new RegisterRecurringReply((long)parts[0], (string?)parts[1] ?? string.Empty, (string?)parts[2] ?? string.Empty, (long)parts[3]);
    }
}
