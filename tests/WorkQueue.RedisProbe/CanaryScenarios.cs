using System.Diagnostics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace WorkQueue.RedisProbe;

/// <summary>
/// The thread-pool starvation alarm against the real CLR thread pool (no Redis): <c>canary-starved</c> starves this
/// process's pool on purpose and reports whether the canary saw it, logged it and recovered; <c>canary-busy</c> keeps the
/// pool busy with short work items and reports the largest wait the canary saw. Run from the main thread, which is not a
/// pool thread, polling with sleeps: nothing here needs the pool once it is starved.
/// </summary>
internal static class CanaryScenarios
{
    private static readonly TimeSpan Threshold = TimeSpan.FromMilliseconds(300);
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(60);

    public static int Run(string scenario)
    {
        if (scenario.StartsWith("canary-idle", StringComparison.Ordinal))
        {
            return Idle(enabled: scenario == "canary-idle-on");
        }

        var warnings = new WarningCount();
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Logging.AddProvider(warnings);
        builder.Services.Configure<ThreadPoolCanaryOptions>(o =>
        {
            o.Interval = TimeSpan.FromMilliseconds(100);
            o.StarvationThreshold = Threshold;
        });
        builder.Services.AddWorkQueue();
        builder.Services.AddHealthChecks().AddWorkQueueThreadPool(degradedAfter: Threshold, unhealthyAfter: TimeSpan.FromSeconds(2));
        using var host = builder.Build();
        host.StartAsync().WaitAsync(Generous).GetAwaiter().GetResult();
        var canary = host.Services.GetRequiredService<IThreadPoolCanary>();
        // The registered check itself, called here: HealthCheckService runs checks through Task.Run, which needs the very
        // pool that is starved (a readiness probe over HTTP waits the same way; the check's answer is what is tested).
        var registration = host.Services.GetRequiredService<Microsoft.Extensions.Options.IOptions<HealthCheckServiceOptions>>().Value.Registrations.Single(r => r.Name == "workqueue-threadpool");
        var check = registration.Factory(host.Services);
        var context = new HealthCheckContext { Registration = registration };

        // A second of normal life first, so the canary has run.
        Thread.Sleep(1_000);
        ProbeReport.Write("canary.healthyLagMs", canary.GetHealth().MaxLag.TotalMilliseconds.ToString("F1", System.Globalization.CultureInfo.InvariantCulture));
        return scenario == "canary-starved" ? Starved(canary, () => check.CheckHealthAsync(context).GetAwaiter().GetResult().Status, warnings) : Busy(canary, warnings);
    }

    private static int Starved(IThreadPoolCanary canary, Func<HealthStatus> check, WarningCount warnings)
    {
        using (var starved = StarvedThreadPool.Start(workItems: 300, Generous))
        {
            ProbeReport.Write("pool.blocked", starved.Blocked);
            var watch = Stopwatch.StartNew();
            while (!canary.GetHealth().IsStarving && watch.Elapsed < Generous)
            {
                Thread.Sleep(20);
            }

            var health = canary.GetHealth();

            // The canary logs its warning right after it marks the pool starving: wait for the line, not for luck.
            var logged = Stopwatch.StartNew();
            while (warnings.Starving == 0 && logged.Elapsed < Generous)
            {
                Thread.Sleep(20);
            }

            ProbeReport.Write("canary.starving", health.IsStarving);
            ProbeReport.Write("canary.seenAfterMs", watch.ElapsedMilliseconds);
            ProbeReport.Write("canary.lagMs", (long)health.Lag.TotalMilliseconds);
            ProbeReport.Write("canary.warnings", warnings.Starving);

            // The check never awaits, so it answers on this thread while the pool is starved.
            ProbeReport.Write("health.whileStarved", check());
        }

        var recovery = Stopwatch.StartNew();
        while (canary.GetHealth().IsStarving && recovery.Elapsed < Generous)
        {
            Thread.Sleep(20);
        }

        bool recovered = !canary.GetHealth().IsStarving;
        var recoveryLogged = Stopwatch.StartNew();
        while (recovered && warnings.Recovered == 0 && recoveryLogged.Elapsed < Generous)
        {
            Thread.Sleep(20);
        }

        ProbeReport.Write("canary.recovered", recovered);
        ProbeReport.Write("canary.recoveredLogs", warnings.Recovered);
        return 0;
    }

    /// <summary>
    /// The canary's own cost: an idle host (one default queue, canary on or off at its default 1 s interval) for 60 s,
    /// this process's CPU time over the window (after a 5 s settle) printed, to compare on and off in one sitting.
    /// </summary>
    private static int Idle(bool enabled)
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Services.Configure<ThreadPoolCanaryOptions>(o => o.Enabled = enabled);
        builder.Services.AddWorkQueue();
        using var host = builder.Build();
        host.StartAsync().WaitAsync(Generous).GetAwaiter().GetResult();
        // Past start-up and past the tier-up of the canary's own code (its tick is compiled again after 30 calls, one a
        // second): the steady state is what an idle hour costs; a 60 s window right after start measured mostly the JIT.
        Thread.Sleep(TimeSpan.FromSeconds(int.TryParse(Environment.GetEnvironmentVariable("CANARY_IDLE_WARMUP_SECONDS"), out int w) ? w : 60));
        var process = Process.GetCurrentProcess();
        process.Refresh();
        var before = process.TotalProcessorTime;
        var window = TimeSpan.FromSeconds(int.TryParse(Environment.GetEnvironmentVariable("CANARY_IDLE_SECONDS"), out int s) ? s : 60);
        Thread.Sleep(window);
        process.Refresh();
        var used = process.TotalProcessorTime - before;
        ProbeReport.Write("idle.enabled", enabled);
        ProbeReport.Write("idle.windowS", window.TotalSeconds);
        ProbeReport.Write("idle.cpuMs", used.TotalMilliseconds.ToString("F1", System.Globalization.CultureInfo.InvariantCulture));
        ProbeReport.Write("idle.cpuMsPerHour", (used.TotalMilliseconds * TimeSpan.FromHours(1) / window).ToString("F0", System.Globalization.CultureInfo.InvariantCulture));
        host.StopAsync().WaitAsync(Generous).GetAwaiter().GetResult();
        return 0;
    }

    private static int Busy(IThreadPoolCanary canary, WarningCount warnings)
    {
        // About half of one core of short work items, as a busy but healthy service's request work: 40 every 10 ms.
        long items = 0;
        var watch = Stopwatch.StartNew();
        while (watch.Elapsed < TimeSpan.FromSeconds(5))
        {
            for (int i = 0; i < 40; i++)
            {
                ThreadPool.UnsafeQueueUserWorkItem(static _ => Thread.SpinWait(2_000), (object?)null);
                items++;
            }

            Thread.Sleep(10);
        }

        var health = canary.GetHealth();
        ProbeReport.Write("busy.items", items);
        ProbeReport.Write("canary.maxLagMs", health.MaxLag.TotalMilliseconds.ToString("F1", System.Globalization.CultureInfo.InvariantCulture));
        ProbeReport.Write("canary.starving", health.IsStarving);
        ProbeReport.Write("canary.warnings", warnings.Starving);
        return 0;
    }

    private sealed class WarningCount : ILoggerProvider, ILogger
    {
        private int _starving;
        private int _recovered;

        public int Starving => Volatile.Read(ref _starving);

        public int Recovered => Volatile.Read(ref _recovered);

        public ILogger CreateLogger(string categoryName) => this;

        public void Dispose()
        {
        }

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (eventId.Name == "ThreadPoolStarving")
            {
                Interlocked.Increment(ref _starving);
            }
            else if (eventId.Name == "ThreadPoolRecovered")
            {
                Interlocked.Increment(ref _recovered);
            }
        }
    }
}
