using BenchmarkDotNet.Columns;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// What redis-server did per job over every invocation of a benchmark process (warm-ups included: the figures are per
/// job and do not depend on timing): commands, script calls and CPU time, written to <see cref="ResultStore"/> after
/// each invocation and shown by <see cref="Columns"/>.
/// </summary>
public sealed class RedisPerJob
{
    private RedisCounters? _total;
    private long _jobs;

    /// <summary>The columns that show the figures, read under the benchmark's key plus <paramref name="keySuffix"/>'s parameter value.</summary>
    /// <param name="keySuffix">The parameter whose value ends the result key, or <see langword="null"/>.</param>
    /// <returns>The columns.</returns>
    public static IColumn[] Columns(string? keySuffix = null) =>
    [
        new ResultColumn("redis_commands_per_job", "Redis cmds/job", "Redis cmds/job: commands redis-server ran per job, those inside Lua scripts included (INFO commandstats)", "N1", keySuffix: keySuffix),
        new ResultColumn("redis_scripts_per_1k_jobs", "Scripts/1k jobs", "Scripts/1k jobs: EVAL/EVALSHA calls per 1,000 jobs (each one round trip)", "N1", keySuffix: keySuffix),
        new ResultColumn("redis_cpu_us_per_job", "Redis CPU us/job", "Redis CPU us/job: redis-server's CPU time (user + system) per job", "N1", keySuffix: keySuffix),
    ];

    /// <summary>Adds one invocation's counters and jobs, and writes the totals per job under <paramref name="key"/>.</summary>
    /// <param name="delta">What Redis counted over the invocation.</param>
    /// <param name="jobs">The jobs of the invocation.</param>
    /// <param name="key">The benchmark's result key.</param>
    public void Record(RedisCounters delta, long jobs, string key)
    {
        _total = _total is null ? delta : _total + delta;
        _jobs += jobs;
        ResultStore.Write(key, new Dictionary<string, double>
        {
            ["redis_commands_per_job"] = (double)_total.Commands / _jobs,
            ["redis_scripts_per_1k_jobs"] = 1000.0 * _total.Scripts / _jobs,
            ["redis_cpu_us_per_job"] = 1e6 * _total.CpuSeconds / _jobs,
            ["jobs"] = _jobs,
        });
        Console.WriteLine($"// Redis commands over {_jobs} jobs: {_total}");
    }
}
