using BenchmarkDotNet.Columns;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// What redis-server did per job over every invocation of a benchmark process (warm-ups included: the figures are per
/// job and do not depend on timing): commands, script calls and CPU time; and, where the benchmark gives it, the CPU
/// time of the benchmark process itself (the application: producers, store, Redis client, workers) per job, over the
/// second half of the invocations only (the first ones compile the code: 20-30 us a durable job against 8-10 once
/// compiled). Written to <see cref="ResultStore"/> after each invocation and shown by <see cref="Columns"/>.
/// </summary>
public sealed class RedisPerJob
{
    private RedisCounters? _total;
    private readonly List<(TimeSpan Cpu, long Jobs)> _appCpu = [];
    private long _jobs;

    /// <summary>The columns that show the figures, read under the benchmark's key plus <paramref name="keySuffix"/>'s parameter value.</summary>
    /// <param name="keySuffix">The parameter whose value ends the result key, or <see langword="null"/>.</param>
    /// <param name="appCpu">Whether to show the benchmark process's CPU per job too.</param>
    /// <returns>The columns.</returns>
    public static IColumn[] Columns(string? keySuffix = null, bool appCpu = false) =>
    [
        new ResultColumn("redis_commands_per_job", "Redis cmds/job", "Redis cmds/job: commands redis-server ran per job, those inside Lua scripts included (INFO commandstats)", "N1", keySuffix: keySuffix),
        new ResultColumn("redis_scripts_per_1k_jobs", "Scripts/1k jobs", "Scripts/1k jobs: EVAL/EVALSHA calls per 1,000 jobs (each one round trip)", "N1", keySuffix: keySuffix),
        new ResultColumn("redis_cpu_us_per_job", "Redis CPU us/job", "Redis CPU us/job: redis-server's CPU time (user + system) per job", "N1", keySuffix: keySuffix),
        .. appCpu
            ? new[] { new ResultColumn("app_cpu_us_per_job", "App CPU us/job", "App CPU us/job: the benchmark process's CPU time (user + system: producers, the store, the Redis client, the workers) per job; for the BullMQ rows its child process's (producers, Queue, Worker), over the second half of the invocations", "N1", keySuffix: keySuffix) }
            : [],
    ];

    /// <summary>Adds one invocation's counters and jobs, and writes the totals per job under <paramref name="key"/>.</summary>
    /// <param name="delta">What Redis counted over the invocation.</param>
    /// <param name="jobs">The jobs of the invocation.</param>
    /// <param name="key">The benchmark's result key.</param>
    public void Record(RedisCounters delta, long jobs, string key) => Record(delta, appCpu: null, jobs, key);

    /// <summary>
    /// Adds one invocation's Redis counters (none for a row that does not use Redis), the benchmark process's CPU time
    /// over it (none when the jobs run in another process) and its jobs, and writes the totals per job under <paramref name="key"/>.
    /// </summary>
    /// <param name="delta">What Redis counted over the invocation, or <see langword="null"/>.</param>
    /// <param name="appCpu">The benchmark process's CPU time over the invocation, or <see langword="null"/>.</param>
    /// <param name="jobs">The jobs of the invocation.</param>
    /// <param name="key">The benchmark's result key.</param>
    public void Record(RedisCounters? delta, TimeSpan? appCpu, long jobs, string key)
    {
        if (delta is not null)
        {
            _total = _total is null ? delta : _total + delta;
        }

        if (appCpu is { } cpu)
        {
            _appCpu.Add((cpu, jobs));
        }

        _jobs += jobs;
        var values = new Dictionary<string, double> { ["jobs"] = _jobs };
        if (_total is not null)
        {
            values["redis_commands_per_job"] = (double)_total.Commands / _jobs;
            values["redis_scripts_per_1k_jobs"] = 1000.0 * _total.Scripts / _jobs;
            values["redis_cpu_us_per_job"] = 1e6 * _total.CpuSeconds / _jobs;
            Console.WriteLine($"// Redis commands over {_jobs} jobs: {_total}");
        }

        if (_appCpu.Count > 0)
        {
            var late = _appCpu.Skip(_appCpu.Count / 2).ToList();
            values["app_cpu_us_per_job"] = 1e6 * late.Sum(static i => i.Cpu.TotalSeconds) / late.Sum(static i => i.Jobs);
        }

        ResultStore.Write(key, values);
    }
}
