using System.Text.RegularExpressions;
using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// Asks Redis whether the connection's user may run every command a durable queue sends, on the queue's keys and
/// channels, without running any (<c>checkAccess.lua</c>, one call): at startup (<see cref="DurableServerChecks"/>), and
/// when Redis refuses the queue a command (<see cref="RedisStreamStore"/>), so that the refusal names the command and
/// the ACL to add rather than Redis's bare <c>NOPERM</c>.
/// </summary>
internal static partial class DurableAccess
{
    /// <summary>Tells whether a Redis error is an ACL refusal: NOPERM, or its form inside a script before Redis 7.2.</summary>
    public static bool IsRefusal(string? message) =>
        message is not null
        && (message.Contains("NOPERM", StringComparison.Ordinal) || message.Contains("The user executing the script can't", StringComparison.Ordinal));

    /// <summary>Gets the user <paramref name="multiplexer"/> signs in as (<c>default</c> without one).</summary>
    public static string UserOf(IConnectionMultiplexer multiplexer)
    {
        try
        {
            return ConfigurationOptions.Parse(multiplexer.Configuration).User is { Length: > 0 } user ? user : "default";
        }
        catch (ArgumentException)
        {
            return "default";
        }
    }

    public static async Task<AccessReport> CheckAsync(IDatabase db, RedisStreamKeys keys, string prefix, bool consume)
    {
        var (scriptKeys, args, probes) = Call(keys, prefix, consume);
        try
        {
            return Read(await db.ScriptEvaluateAsync(DurableScripts.CheckAccess, scriptKeys, args).ConfigureAwait(false), probes);
        }
        catch (RedisServerException ex) when (IsRefusal(ex.Message))
        {
            return RefusedCheck(ex.Message, prefix);
        }
    }

    public static AccessReport Check(IDatabase db, RedisStreamKeys keys, string prefix, bool consume)
    {
        var (scriptKeys, args, probes) = Call(keys, prefix, consume);
        try
        {
            return Read(db.ScriptEvaluate(DurableScripts.CheckAccess, scriptKeys, args), probes);
        }
        catch (RedisServerException ex) when (IsRefusal(ex.Message))
        {
            return RefusedCheck(ex.Message, prefix);
        }
    }

    private static (RedisKey[] Keys, RedisValue[] Args, IReadOnlyList<AccessProbe> Probes) Call(RedisStreamKeys keys, string prefix, bool consume)
    {
        var probes = DurableAcl.Probes(keys, prefix, consume);
        var args = new List<RedisValue>();
        foreach (var probe in probes)
        {
            args.Add(probe.Command.Count);
            args.AddRange(probe.Command.Select(static word => (RedisValue)word));
        }

        return ([.. DurableAcl.AccessKeys(keys).Select(static k => (RedisKey)k)], [.. args], probes);
    }

    private static AccessReport Read(RedisResult reply, IReadOnlyList<AccessProbe> probes)
    {
        // Lua's false (no acl_check_cmd) arrives as a null reply.
        if (reply.IsNull)
        {
            return AccessReport.Unchecked;
        }

        var refused = ((RedisResult[])reply!).Select(static n => (int)n - 1).Select(i => probes[i]).ToArray();
        return new AccessReport(
            [.. refused.Select(static p => p.Name).Distinct()],
            [.. refused.SelectMany(static p => p.Rules.Split(' ')).Distinct()],
            null,
            Checked: true);
    }

    /// <summary>Redis refused the check's script itself: its keys (the key pattern leaves the queue out), or EVAL/EVALSHA.</summary>
    private static AccessReport RefusedCheck(string error, string prefix)
    {
        if (error.Contains("keys", StringComparison.Ordinal))
        {
            return new AccessReport([], [DurableAcl.KeyPattern(prefix)], error, Checked: true);
        }

        var command = RefusedCommand().Match(error);
        return command.Success
            ? new AccessReport([command.Groups[1].Value.Replace('|', ' ').ToUpperInvariant()], ["+" + command.Groups[1].Value], error, Checked: true)
            : new AccessReport([], [], error, Checked: true);
    }

    [GeneratedRegex(@"run the '([a-z_|\-]+)' command", RegexOptions.CultureInvariant)]
    private static partial Regex RefusedCommand();
}
