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

    /// <summary>Asks Redis which commands the queue sends the connection's user may not run (<see cref="Calls.CheckAccessCall"/>).</summary>
    public static async Task<AccessReport> CheckAsync(IDatabase db, RedisStreamKeys keys, string prefix, bool consume)
    {
        var probes = DurableAcl.Probes(keys, prefix, consume);
        try
        {
            return Read(await Calls.CheckAccessCall.RunAsync(db, keys, probes).ConfigureAwait(false), probes);
        }
        catch (RedisServerException ex) when (IsRefusal(ex.Message))
        {
            return RefusedCheck(ex.Message, prefix);
        }
    }

    /// <summary>The same check, synchronously: the store asks on its own thread.</summary>
    public static AccessReport Check(IDatabase db, RedisStreamKeys keys, string prefix, bool consume)
    {
        var probes = DurableAcl.Probes(keys, prefix, consume);
        try
        {
            return Read(Calls.CheckAccessCall.Run(db, keys, probes), probes);
        }
        catch (RedisServerException ex) when (IsRefusal(ex.Message))
        {
            return RefusedCheck(ex.Message, prefix);
        }
    }

    private static AccessReport Read(Calls.CheckAccessReply reply, IReadOnlyList<AccessProbe> probes)
    {
        if (!reply.Checked)
        {
            return AccessReport.Unchecked;
        }

        var refused = reply.Refused.Select(n => probes[n - 1]).ToArray();
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
