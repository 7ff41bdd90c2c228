using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Durable recurring jobs across processes, at CI size: <c>tests/WorkQueue.DurableChaos</c>'s <c>recurring</c> command
/// starts its own redis-server and three worker processes that all register the same every-second recurring job on a
/// durable queue, then counts in Redis how many times each occurrence completed and which process started and finished
/// it. The longer run (many kills over minutes) is <c>scripts/recurring-chaos.sh</c>.
/// </summary>
public sealed class RecurringChaosTests(ITestOutputHelper output)
{
    [Fact]
    public async Task ThreeHostProcesses_SixtyOccurrences_EachRunsExactlyOnce()
    {
        var run = await DurableChaosProcess.RunRecurringAsync("--seconds", "60", "--workers", "3", "--kill-interval-ms", "0", "--timeout-s", "180");
        output.WriteLine(run.Output);

        Assert.True(run.Number("occurrences_expected") >= 58, $"Only {run["occurrences_expected"]} occurrences checked.\n{run.Output}");
        Assert.True(run.Number("lost") == 0, $"{run["lost"]} occurrences never ran.\n{run.Output}");
        Assert.True(run.Number("duplicates") == 0, $"{run["duplicates"]} extra runs without any kill.\n{run.Output}");
        Assert.Equal(0, run.Number("worker_crashes"));
        Assert.Equal(0, run.ExitCode);
    }

    [Fact]
    public async Task HostProcessesSigkilledWhileRunningAnOccurrence_NoneLost_DuplicatesOnlyAfterAKill()
    {
        var run = await DurableChaosProcess.RunRecurringAsync("--seconds", "60", "--workers", "3", "--kill-interval-ms", "10000", "--timeout-s", "180");
        output.WriteLine(run.Output);

        Assert.True(run.Number("occurrences_expected") >= 58, $"Only {run["occurrences_expected"]} occurrences checked.\n{run.Output}");
        Assert.True(run.Number("kills") >= 5, $"Only {run["kills"]} kills.\n{run.Output}");

        // The kills cut runs mid-way (the victim is the process running that second's occurrence), and each cut run was
        // taken over: none lost, and any extra run is of an occurrence a killed process had started (at-least-once).
        Assert.True(run.Number("occurrences_interrupted") >= 1, $"No kill cut a run.\n{run.Output}");
        Assert.True(run.Number("lost") == 0, $"{run["lost"]} occurrences never ran.\n{run.Output}");
        Assert.True(run.Number("duplicates_unexplained") == 0, $"{run["duplicates_unexplained"]} extra runs no kill explains.\n{run.Output}");
        Assert.Equal(0, run.Number("worker_crashes"));
        Assert.Equal(0, run.ExitCode);
    }
}
