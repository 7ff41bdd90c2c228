namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// Settings shared by the host process (which parses the command line) and the benchmark processes BenchmarkDotNet
/// starts (which inherit its environment variables).
/// </summary>
public static class BenchmarkSettings
{
    /// <summary>The command-line switch (ours, not BenchmarkDotNet's) that shortens the fixed-window scenarios.</summary>
    public const string QuickSwitch = "--quick";

    /// <summary>The environment variable that carries <see cref="QuickSwitch"/> to the benchmark processes.</summary>
    public const string QuickVariable = "WORKQUEUE_BENCH_QUICK";

    /// <summary>The environment variable that names the folder where window-based scenarios leave their results.</summary>
    public const string ResultsVariable = "WORKQUEUE_BENCH_RESULTS";

    /// <summary>Gets a value indicating whether the fixed windows are shortened for a dry run.</summary>
    public static bool Quick => Environment.GetEnvironmentVariable(QuickVariable) == "1";

    /// <summary>Gets how long the idle-cost scenario watches the process's CPU time: 10 s, or 1 s with <c>--quick</c>.</summary>
    public static TimeSpan IdleWindow => Quick ? TimeSpan.FromSeconds(1) : TimeSpan.FromSeconds(10);

    /// <summary>
    /// Gets how long the durable idle-cost scenario watches CPU time and Redis's counters: 60 s (every periodic task of a
    /// durable queue in its proportion: 60 polls, 6 heartbeats, one clean-up), or 1 s with <c>--quick</c>.
    /// </summary>
    public static TimeSpan DurableIdleWindow => Quick ? TimeSpan.FromSeconds(1) : TimeSpan.FromSeconds(60);

    /// <summary>
    /// Gets how long the durable idle-cost scenario lets a started queue settle before its first window: 40 s, past the
    /// runtime's tiered compilation of the code that runs once a poll (a method is recompiled after 30 calls, so 30 s
    /// at one poll a second), or 0.2 s with <c>--quick</c>.
    /// </summary>
    public static TimeSpan DurableIdleSettle => Quick ? TimeSpan.FromMilliseconds(200) : TimeSpan.FromSeconds(40);

    /// <summary>
    /// Gets how long the durable idle-cost scenario waits after each window's probe, before the next window: 20 s, or
    /// 0.2 s with <c>--quick</c>. The probe's jobs make the runtime recompile the enqueue and run path (tiered
    /// compilation, on a background thread, shortly after): a one-off cost, larger for a larger probe, kept out of the
    /// next window.
    /// </summary>
    public static TimeSpan DurableIdleProbeSettle => Quick ? TimeSpan.FromMilliseconds(200) : TimeSpan.FromSeconds(20);

    /// <summary>Gets how long the blocking-jobs scenario runs its load: 5 s, or 1 s with <c>--quick</c>.</summary>
    public static TimeSpan BlockingWindow => Quick ? TimeSpan.FromSeconds(1) : TimeSpan.FromSeconds(5);

    /// <summary>Gets how many wake-ups the latency scenario samples per benchmark: 500, or 50 with <c>--quick</c>.</summary>
    public static int WakeUpSamples => Quick ? 50 : 500;

    /// <summary>Gets this run's folder for window-based results (set by <see cref="PrepareHost"/>).</summary>
    /// <exception cref="InvalidOperationException">The process was not started through <c>Program</c>'s switcher.</exception>
    public static string ResultsDirectory =>
        Environment.GetEnvironmentVariable(ResultsVariable) is { Length: > 0 } directory
            ? directory
            : throw new InvalidOperationException($"{ResultsVariable} is not set: run the benchmarks through WorkQueue.Benchmarks' Program.");

    /// <summary>
    /// Turns the command line into BenchmarkDotNet's: strips <see cref="QuickSwitch"/>, defaults to <c>--job short</c>,
    /// and sets the environment variables the benchmark processes read.
    /// </summary>
    /// <param name="args">The command-line arguments.</param>
    /// <returns>The arguments for <c>BenchmarkSwitcher</c>.</returns>
    public static string[] PrepareHost(string[] args)
    {
        var result = args.Where(a => !string.Equals(a, QuickSwitch, StringComparison.OrdinalIgnoreCase)).ToList();
        if (result.Count != args.Length)
        {
            Environment.SetEnvironmentVariable(QuickVariable, "1");
        }

        // A job given on the command line wins; otherwise every scenario runs as a short job (3 warm-ups, 3 iterations),
        // which keeps the whole suite well within a quarter of an hour on 2 cores.
        if (!result.Any(a => a is "-j" || a.StartsWith("--job", StringComparison.OrdinalIgnoreCase)))
        {
            result.Add("--job");
            result.Add("short");
        }

        // A folder per run: results of an earlier (or a concurrent) run must never show up as this run's.
        int artifacts = result.FindIndex(a => a is "--artifacts" or "-a");
        string artifactsPath = artifacts >= 0 && artifacts + 1 < result.Count ? result[artifacts + 1] : "BenchmarkDotNet.Artifacts";
        string run = $"{DateTime.UtcNow:yyyyMMdd-HHmmss}-{Environment.ProcessId}";
        // Created by the first benchmark that records a result.
        Environment.SetEnvironmentVariable(ResultsVariable, Path.GetFullPath(Path.Combine(artifactsPath, "workqueue-results", run)));
        return [.. result];
    }
}
