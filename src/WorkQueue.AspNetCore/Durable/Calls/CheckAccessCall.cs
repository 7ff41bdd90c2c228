using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/checkAccess.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its reply
/// read, in one place. The access check (<see cref="DurableAccess"/>, at startup and when Redis refuses a command) and
/// the script's tests call it alike.
/// </summary>
internal static class CheckAccessCall
{
    /// <summary>Asks Redis which of <paramref name="probes"/> the connection's user may not run, without running any.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys (one of each kind is declared: Redis refuses the call when the user may not reach them).</param>
    /// <param name="probes">The commands to ask about (<see cref="DurableAcl.Probes"/>).</param>
    /// <returns>The reply read.</returns>
    public static async Task<CheckAccessReply> RunAsync(IDatabase db, RedisStreamKeys keys, IReadOnlyList<AccessProbe> probes) =>
        CheckAccessReply.Read(await db.ScriptEvaluateAsync(DurableScripts.CheckAccess, Keys(keys), Arguments(probes)).ConfigureAwait(false));

    /// <summary>The same call, synchronously: the store asks on its own thread when Redis refused it a command.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys.</param>
    /// <param name="probes">The commands to ask about.</param>
    /// <returns>The reply read.</returns>
    public static CheckAccessReply Run(IDatabase db, RedisStreamKeys keys, IReadOnlyList<AccessProbe> probes) =>
        CheckAccessReply.Read(db.ScriptEvaluate(DurableScripts.CheckAccess, Keys(keys), Arguments(probes)));

    /// <summary>KEYS: one key of each kind the queue keeps (<see cref="DurableAcl.AccessKeys"/>).</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [.. DurableAcl.AccessKeys(keys).Select(static k => (RedisKey)k)];

    /// <summary>ARGV: per probe, its word count, then its words (a command as the queue sends it).</summary>
    public static RedisValue[] Arguments(IReadOnlyList<AccessProbe> probes)
    {
        var args = new List<RedisValue>();
        foreach (var probe in probes)
        {
            args.Add(probe.Command.Count);
            args.AddRange(probe.Command.Select(static word => (RedisValue)word));
        }

        return [.. args];
    }
}

/// <summary>What <c>checkAccess.lua</c> answers.</summary>
/// <param name="Checked"><see langword="false"/> when Redis cannot tell (before 7.0, no <c>redis.acl_check_cmd</c>): nothing was checked.</param>
/// <param name="Refused">The probes refused, by their number from 1 in the order sent; empty when none (or nothing was checked).</param>
internal readonly record struct CheckAccessReply(bool Checked, int[] Refused)
{
    /// <summary>Reads the script's reply: the refused probes' numbers, or false (a null reply) when nothing could be checked.</summary>
    public static CheckAccessReply Read(RedisResult reply) =>
        reply.IsNull ? new CheckAccessReply(false, []) : new CheckAccessReply(true, [.. ((RedisResult[])reply!).Select(static n => (int)n)]);
}
