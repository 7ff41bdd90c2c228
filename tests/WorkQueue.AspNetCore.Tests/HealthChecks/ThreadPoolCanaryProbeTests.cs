using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.HealthChecks;

/// <summary>
/// The thread-pool starvation alarm against the real CLR thread pool, in a child process (starving the test runner's own
/// pool would stall every other test): it fires when the pool is starved on purpose, with the warning and the health
/// check, recovers when the pool frees, and stays quiet on a busy but healthy pool.
/// </summary>
public sealed class ThreadPoolCanaryProbeTests
{
    [Fact]
    public async Task StarvedPool_AlarmFires_HealthCheckUnhealthy_ThenRecovers()
    {
        var probe = await RedisProbeProcess.RunAsync("canary-starved", redisPort: 0);

        Assert.Equal(0, probe.ExitCode);
        Assert.Equal("True", probe["canary.starving"]);
        Assert.Equal("1", probe["canary.warnings"]);
        Assert.True(long.Parse(probe["canary.lagMs"], System.Globalization.CultureInfo.InvariantCulture) >= 300, probe.Output);
        Assert.Contains(probe["health.whileStarved"], new[] { "Degraded", "Unhealthy" });
        Assert.Equal("True", probe["canary.recovered"]);
        Assert.Equal("1", probe["canary.recoveredLogs"]);
    }

    [Fact]
    public async Task BusyHealthyPool_AlarmStaysQuiet()
    {
        var probe = await RedisProbeProcess.RunAsync("canary-busy", redisPort: 0);

        Assert.Equal(0, probe.ExitCode);
        Assert.True(long.Parse(probe["busy.items"], System.Globalization.CultureInfo.InvariantCulture) > 10_000, probe.Output);
        Assert.Equal("False", probe["canary.starving"]);
        Assert.Equal("0", probe["canary.warnings"]);
    }
}
