using System.Globalization;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// What a redis-server has counted so far: calls per command (<c>INFO commandstats</c>, which counts the commands a Lua
/// script runs as well as the script call itself) and its CPU time (<c>INFO cpu</c>, main thread and children).
/// </summary>
/// <param name="Calls">Calls per command name (<c>evalsha</c>, <c>xadd</c>, <c>client|setname</c>, ...).</param>
/// <param name="CpuSeconds">The server's user + system CPU time, in seconds.</param>
public sealed record RedisCounters(IReadOnlyDictionary<string, long> Calls, double CpuSeconds)
{
    /// <summary>The command the counters themselves are read with: left out of every figure.</summary>
    public const string InfoCommand = "info";

    /// <summary>Gets the calls of every command but <see cref="InfoCommand"/>, those run inside scripts included.</summary>
    public long Commands => Calls.Where(c => c.Key != InfoCommand).Sum(c => c.Value);

    /// <summary>Gets the script calls (<c>EVAL</c> and <c>EVALSHA</c>): one round trip each.</summary>
    public long Scripts => Calls.Where(c => c.Key is "eval" or "evalsha").Sum(c => c.Value);

    /// <summary>Subtracts an earlier reading.</summary>
    /// <param name="later">The later reading.</param>
    /// <param name="earlier">The earlier reading.</param>
    /// <returns>What happened in between.</returns>
    public static RedisCounters operator -(RedisCounters later, RedisCounters earlier) => new(
        later.Calls.ToDictionary(c => c.Key, c => c.Value - earlier.Calls.GetValueOrDefault(c.Key)),
        later.CpuSeconds - earlier.CpuSeconds);

    /// <summary>Adds two readings of separate periods (a total over several).</summary>
    /// <param name="first">One period's counters.</param>
    /// <param name="second">Another period's counters.</param>
    /// <returns>Both together.</returns>
    public static RedisCounters operator +(RedisCounters first, RedisCounters second) => new(
        first.Calls.Keys.Union(second.Calls.Keys).ToDictionary(k => k, k => first.Calls.GetValueOrDefault(k) + second.Calls.GetValueOrDefault(k)),
        first.CpuSeconds + second.CpuSeconds);

    /// <summary>Reads the reply of <c>INFO commandstats</c> followed by that of <c>INFO cpu</c>.</summary>
    /// <param name="info">The text of both replies.</param>
    /// <returns>The counters.</returns>
    public static RedisCounters Parse(string info)
    {
        var calls = new Dictionary<string, long>(StringComparer.Ordinal);
        double cpu = 0;
        foreach (var raw in info.Split('\n'))
        {
            string line = raw.Trim();
            if (line.StartsWith("cmdstat_", StringComparison.Ordinal))
            {
                // cmdstat_xadd:calls=100000,usec=64815,usec_per_call=0.65,...
                int colon = line.IndexOf(':', StringComparison.Ordinal);
                string name = line[8..colon];
                string callsField = line[(colon + 1)..].Split(',')[0];
                calls[name] = long.Parse(callsField["calls=".Length..], CultureInfo.InvariantCulture);
            }
            else if (line.StartsWith("used_cpu_sys:", StringComparison.Ordinal) || line.StartsWith("used_cpu_user:", StringComparison.Ordinal))
            {
                cpu += double.Parse(line[(line.IndexOf(':', StringComparison.Ordinal) + 1)..], CultureInfo.InvariantCulture);
            }
        }

        return new RedisCounters(calls, cpu);
    }

    /// <summary>Describes the calls per command, most called first, for the log.</summary>
    /// <returns>One line.</returns>
    public override string ToString() => string.Join(", ", Calls.Where(c => c.Value != 0).OrderByDescending(c => c.Value).Select(c => $"{c.Key}={c.Value}"));
}
