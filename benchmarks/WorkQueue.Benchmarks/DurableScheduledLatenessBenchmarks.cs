using System.Diagnostics;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Durable scenario D4: how late a durable delayed job starts on an idle machine, scenario 7's method
/// (<see cref="ScheduledLatenessBenchmarks"/>) on a durable queue (<c>IWorkQueue.ScheduleAsync</c>) against
/// Hangfire's scheduled jobs on Redis storage and BullMQ's delayed jobs (the <c>delay</c> option). Lateness = the job's
/// first line minus its due time, both read from the <see cref="Stopwatch"/> (BullMQ: <c>performance.now()</c>) of the
/// process that schedules and runs the job (Hangfire's and BullMQ's: their child process). Not a
/// micro-benchmark: each benchmark runs once per process, with a redis-server of its own (AOF on,
/// <c>appendfsync everysec</c>), and takes its own samples.
/// </summary>
/// <remarks>
/// <para>
/// The clocks. The due time is the timestamp taken just before the schedule call plus the delay, and the job's first
/// line reads the same clock in the same process, so a sample never subtracts two clocks. The libraries decide with
/// another clock: the durable queue's due time is Redis's (<c>TIME</c>, the server's wall clock, in whole milliseconds);
/// Hangfire's is its client's <c>DateTime.UtcNow</c> plus the delay (in whole seconds), which its scheduler compares with
/// the storage's time (Redis's <c>TIME</c> too); BullMQ's is its client's <c>Date.now()</c> plus the delay (whole
/// milliseconds), compared with its worker's <c>Date.now()</c>. Here redis-server runs on the same machine (loopback), so
/// all are this machine's wall clock, which advances with the monotonic clock the samples use
/// (up to NTP's slewing, at most 0.05 %: 0.5 ms over a 1 s delay). Against a remote Redis, a skew between the two
/// machines' clocks would move every durable sample by that much; these rows cannot show it.
/// </para>
/// <para>
/// Every sample leaves the process idle for <see cref="ScheduledLatenessBenchmarks.IdleGap"/> plus, on the rows that
/// poll, a random part of their period, as scenario 7 does, then schedules one job due <see cref="ShortDelay"/> (or
/// <see cref="LongDelay"/>) plus a random part of a millisecond and blocks until the job's first line has run. The same
/// seed as scenario 7's gives every row the same delays and arrival points.
/// </para>
/// </remarks>
[FixedWindowRun]
[Config(typeof(Config))]
public class DurableScheduledLatenessBenchmarks
{
    /// <summary>The whole-millisecond part of the short rows' delay (scenario 7's); a random part of one more millisecond is added.</summary>
    public static readonly TimeSpan ShortDelay = ScheduledLatenessBenchmarks.Delay;

    /// <summary>
    /// The long row's delay: longer than the queue's 1 s <c>PollInterval</c> is short, so the consumer goes back to
    /// sleep at least once (until the job's due time) between the schedule call and the job.
    /// </summary>
    public static readonly TimeSpan LongDelay = TimeSpan.FromSeconds(1);

    /// <summary>Hangfire's default <c>SchedulePollingInterval</c>: 15 s.</summary>
    public static readonly TimeSpan HangfireDefaultPolling = TimeSpan.FromSeconds(15);

    /// <summary>The durable queue's default <c>PollInterval</c> (1 s): the long row's random arrival range.</summary>
    public static readonly TimeSpan DurablePollInterval = TimeSpan.FromSeconds(1);

    /// <summary>
    /// redis-server's background tick at its default <c>hz</c> (10): BullMQ's Worker waits for a delayed job's due time in
    /// a <c>BZPOPMIN</c> with that timeout, and redis-server ends such a timeout on its tick, not sooner (a 20 ms
    /// <c>BZPOPMIN</c> on an empty key returned after 50-100 ms at <c>hz</c> 10, 24-34 ms at <c>hz</c> 100). The BullMQ
    /// 20 ms row's random arrival range: with scenario 7's fixed 2 ms gap alone its samples would fall at one phase of
    /// the tick (all of them about 75 ms late in the dry run) instead of across it.
    /// </summary>
    public static readonly TimeSpan RedisDefaultTick = TimeSpan.FromMilliseconds(100);

    /// <summary>The worker count of every row (scenario 7's).</summary>
    public const int Workers = 1;

    private const int Seed = 20261124;

    // Samples of this process's benchmark (one benchmark per process).
    private static readonly LatenessSamples Samples = new();

    private readonly LatenessProbe _probe = new();
    private RedisServerProcess? _redis;
    private DurableBenchHost? _durable;
    private HangfireRedisProcess? _hangfire;
    private BullMqProcess? _bullMq;

    /// <summary>Samples of the rows that do not poll: 1,000 (100 with <c>--quick</c>) after 100 warm-ups, as scenario 7.</summary>
    private static Plan InProcess => new(100, BenchmarkSettings.Quick ? 100 : 1_000, TimeSpan.Zero, ShortDelay);

    [GlobalSetup(Targets = [nameof(WorkQueue_Durable_ScheduleAsync_20ms), nameof(WorkQueue_Durable_ScheduleAsync_1s)])]
    public void SetupDurable()
    {
        _redis = RedisServerProcess.Start("everysec");
        _durable = DurableBenchHost.StartDurable<LatenessProbeHandler>(_redis, Workers, s => s.AddSingleton(_probe));
    }

    [GlobalSetup(Target = nameof(Hangfire_Redis_Schedule_DefaultPolling15s))]
    public void SetupHangfireDefault() => StartHangfire(HangfireDefaultPolling);

    [GlobalSetup(Target = nameof(Hangfire_Redis_Schedule_Polling1s))]
    public void SetupHangfireShortPolling() => StartHangfire(ScheduledLatenessBenchmarks.HangfireShortPolling);

    [GlobalSetup(Target = nameof(Hangfire_Redis_Schedule_Polling0_BackToBack))]
    public void SetupHangfireNoPollingDelay() => StartHangfire(TimeSpan.Zero);

    [GlobalSetup(Targets = [nameof(BullMQ_Delay_20ms), nameof(BullMQ_Delay_1s)])]
    public void SetupBullMq()
    {
        _redis = RedisServerProcess.Start("everysec");
        _bullMq = BullMqProcess.Start(_redis.Configuration, Workers);
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _durable?.Dispose();
        _hangfire?.Dispose();
        _bullMq?.Dispose();
        _redis?.Dispose();
        _probe.Dispose();
    }

    [Benchmark(Baseline = true, Description = "WorkQueue durable ScheduleAsync(payload, 20 ms + <1 ms), 1 worker (Redis, AOF everysec)")]
    public double WorkQueue_Durable_ScheduleAsync_20ms() => Measure(nameof(WorkQueue_Durable_ScheduleAsync_20ms), InProcess, ScheduleDurable);

    [Benchmark(Description = "WorkQueue durable ScheduleAsync(payload, 1 s + <1 ms), 1 worker: the consumer sleeps until it is due")]
    public double WorkQueue_Durable_ScheduleAsync_1s() => Measure(
        nameof(WorkQueue_Durable_ScheduleAsync_1s),
        BenchmarkSettings.Quick ? new(1, 10, DurablePollInterval, LongDelay) : new(3, 100, DurablePollInterval, LongDelay),
        ScheduleDurable);

    [Benchmark(Description = "Hangfire client.Schedule on Redis, SchedulePollingInterval 15 s (default), 1 worker (child process)")]
    public double Hangfire_Redis_Schedule_DefaultPolling15s() => Measure(
        nameof(Hangfire_Redis_Schedule_DefaultPolling15s),
        BenchmarkSettings.Quick ? new(1, 2, HangfireDefaultPolling, ShortDelay) : new(1, 20, HangfireDefaultPolling, ShortDelay),
        ScheduleHangfire);

    [Benchmark(Description = "Hangfire client.Schedule on Redis, SchedulePollingInterval 1 s, 1 worker (child process)")]
    public double Hangfire_Redis_Schedule_Polling1s() => Measure(
        nameof(Hangfire_Redis_Schedule_Polling1s),
        BenchmarkSettings.Quick
            ? new(1, 10, ScheduledLatenessBenchmarks.HangfireShortPolling, ShortDelay)
            : new(3, 100, ScheduledLatenessBenchmarks.HangfireShortPolling, ShortDelay),
        ScheduleHangfire);

    [Benchmark(Description = "Hangfire client.Schedule on Redis, SchedulePollingInterval 0 (smallest accepted: polls back to back), 1 worker (child process)")]
    public double Hangfire_Redis_Schedule_Polling0_BackToBack() => Measure(
        nameof(Hangfire_Redis_Schedule_Polling0_BackToBack),
        // Fewer samples than scenario 7's back-to-back row: in the dry runs its worker left a job in the queue for more
        // than a minute about once every hundred samples (see benchmarks/README.md), so 1,000 could take an hour.
        BenchmarkSettings.Quick ? new(1, 10, TimeSpan.Zero, ShortDelay) : new(3, 100, TimeSpan.Zero, ShortDelay),
        ScheduleHangfire);

    [Benchmark(Description = "BullMQ 6.7 queue.add(name, data, { delay: 20 ms + <1 ms, rounded up }), Worker concurrency 1 (Node child process)")]
    public double BullMQ_Delay_20ms() => Measure(
        nameof(BullMQ_Delay_20ms),
        InProcess with { ArrivalSpread = RedisDefaultTick },
        ScheduleBullMq);

    [Benchmark(Description = "BullMQ 6.7 queue.add(name, data, { delay: 1 s + <1 ms, rounded up }), Worker concurrency 1 (Node child process)")]
    public double BullMQ_Delay_1s() => Measure(
        nameof(BullMQ_Delay_1s),
        // The durable 1 s row's plan: the same delays at the same arrival points (the seed is shared).
        BenchmarkSettings.Quick ? new(1, 10, DurablePollInterval, LongDelay) : new(3, 100, DurablePollInterval, LongDelay),
        ScheduleBullMq);

    private static long ToStopwatchTicks(TimeSpan span) => span.Ticks * Stopwatch.Frequency / TimeSpan.TicksPerSecond;

    private void StartHangfire(TimeSpan schedulePollingInterval)
    {
        _redis = RedisServerProcess.Start("everysec");
        _hangfire = HangfireRedisProcess.Start(_redis.Configuration, Workers, schedulePollingInterval);
    }

    /// <summary>One durable sample: the due time, the schedule call, the wait for the job's first line; returns the lateness in ms.</summary>
    private double ScheduleDurable(int id, TimeSpan delay, TimeSpan timeout, string method)
    {
        _probe.Expect(id);
        long due = Stopwatch.GetTimestamp() + ToStopwatchTicks(delay);
        var stored = _durable!.ScheduleAsync(new Order(id), delay);
        long started = _probe.WaitForHit(timeout, method);

        // After the sample: a failed schedule call fails the benchmark (the job cannot have run without it, but its
        // completion may reach this thread after the job's start).
        if (!stored.AsTask().Wait(timeout))
        {
            throw new TimeoutException($"{method}: ScheduleAsync of job {id} did not complete within {timeout.TotalSeconds:0} s.");
        }

        return (started - due) * 1000.0 / Stopwatch.Frequency;
    }

    /// <summary>One Hangfire sample, taken by the child (due time, schedule call and first line on its clock).</summary>
    private double ScheduleHangfire(int id, TimeSpan delay, TimeSpan timeout, string method) => _hangfire!.Schedule(id, delay, timeout);

    /// <summary>One BullMQ sample, taken by the child (due time, add call and first line on its clock).</summary>
    private double ScheduleBullMq(int id, TimeSpan delay, TimeSpan timeout, string method) => _bullMq!.Schedule(id, delay, timeout);

    /// <summary>Takes a row's samples; <paramref name="sample"/> schedules job <c>id</c> due after the delay and returns its lateness in ms.</summary>
    private double Measure(string method, Plan plan, Func<int, TimeSpan, TimeSpan, string, double> sample)
    {
        var random = new Random(Seed);
        // Generous: in the dry runs Hangfire's back-to-back row left a job in its queue, unfetched, for more than a
        // minute (its worker's wait for a fetch notification ends at its FetchTimeout otherwise), and a sample that late
        // is a figure to report, not a failure.
        var timeout = (2 * plan.ArrivalSpread) + plan.Delay + TimeSpan.FromMinutes(5);

        // The work of a Hangfire or BullMQ row is done in its child process: its CPU time is the child's.
        Func<TimeSpan> cpu = _hangfire is { } child ? child.CpuTime : _bullMq is { } node ? node.CpuTime : ProcessCpu.Used;
        long wallStart = 0;
        var cpuStart = TimeSpan.Zero;
        RedisCounters? redisStart = null;
        for (int i = 0; i < plan.Warmups + plan.Samples; i++)
        {
            if (i == plan.Warmups)
            {
                Thread.Sleep(ScheduledLatenessBenchmarks.SettleAfterWarmUp);
                redisStart = _redis!.ReadCounters();
                wallStart = Stopwatch.GetTimestamp();
                cpuStart = cpu();
            }

            Thread.Sleep(ScheduledLatenessBenchmarks.IdleGap + (plan.ArrivalSpread * random.NextDouble()));
            var delay = plan.Delay + TimeSpan.FromTicks(random.NextInt64(TimeSpan.TicksPerMillisecond));
            double lateness = sample(i, delay, timeout, method);
            if (i >= plan.Warmups)
            {
                Samples.Add(lateness);
            }
        }

        var cpuUsed = cpu() - cpuStart;
        var wall = Stopwatch.GetElapsedTime(wallStart);
        var redis = _redis!.ReadCounters() - redisStart!;
        Samples.AddCpu(cpuUsed, wall);
        Console.WriteLine($"// {method}: {Samples.Describe()}");
        Console.WriteLine($"// Redis commands over the {plan.Samples} measured samples ({wall.TotalSeconds:0.0} s): {redis}");
        var summary = Samples.Summarize();
        summary["redis_commands_per_s"] = redis.Commands / wall.TotalSeconds;
        summary["redis_cpu_core_percent"] = 100 * redis.CpuSeconds / wall.TotalSeconds;
        ResultStore.Write(ResultStore.Key(typeof(DurableScheduledLatenessBenchmarks), method), summary);
        return summary["p50_ms"];
    }

    /// <summary>How a row samples: warm-up samples (not recorded), recorded samples, the random arrival's range, the whole-millisecond delay.</summary>
    private readonly record struct Plan(int Warmups, int Samples, TimeSpan ArrivalSpread, TimeSpan Delay);

    private sealed class Config : ManualConfig
    {
        public Config()
        {
            AddColumn(
                new ResultColumn("samples", "Samples", "Samples: jobs measured (after the row's warm-up samples)", "N0"),
                new ResultColumn("min_ms", "Min [ms]", "Min [ms]: the earliest job's lateness (negative: it started before its due time)", "N3"),
                new ResultColumn("p50_ms", "P50 [ms]", "P50 [ms]: median lateness, the job's first line minus its due time, one process's Stopwatch (nearest rank)", "N3"),
                new ResultColumn("p95_ms", "P95 [ms]", "P95 [ms]: 95th percentile of the lateness (nearest rank)", "N3"),
                new ResultColumn("p99_ms", "P99 [ms]", "P99 [ms]: 99th percentile of the lateness (nearest rank; with 20 samples, the slowest)", "N3"),
                new ResultColumn("max_ms", "Max [ms]", "Max [ms]: the latest job's lateness", "N3"),
                new ResultColumn("early", "Early", "Early: samples whose job started before its due time", "N0"),
                new ResultColumn("cpu_core_percent", "CPU [% core]", "CPU [% core]: CPU time over the measured samples of the process that schedules and runs the jobs (Hangfire, BullMQ: its child process), waits included, as a share of one core", "N2"),
                new ResultColumn("redis_cpu_core_percent", "Redis CPU [% core]", "Redis CPU [% core]: redis-server's CPU time over the measured samples as a share of one core", "N2"),
                new ResultColumn("redis_commands_per_s", "Redis cmds/s", "Redis cmds/s: commands redis-server ran per second over the measured samples, those inside Lua scripts included (INFO commandstats; the INFO calls left out)", "N1"));
            HideColumns(Column.Mean, Column.Error, Column.StdDev, Column.Median, Column.Ratio, Column.RatioSD);
        }
    }
}
