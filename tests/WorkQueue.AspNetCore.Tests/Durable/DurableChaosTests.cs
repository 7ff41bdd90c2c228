using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// The multi-process chaos proof at CI size: <c>tests/WorkQueue.DurableChaos</c>'s controller, as a child process, starts
/// its own redis-server (append-only file) and worker processes, enqueues numbered jobs in bursts from 64 producers,
/// SIGKILLs a random busy worker in each burst and starts a replacement (and, in the second run, SIGKILLs and restarts
/// Redis mid-load), then counts in Redis how many times each job completed. The full-size run (100,000 jobs, 50+ kills)
/// is <c>scripts/durable-chaos.sh</c>.
/// </summary>
public sealed class DurableChaosTests(ITestOutputHelper output)
{
    [Fact]
    public async Task WorkersSigkilledUnderLoad_EveryAcknowledgedJobCompletes()
    {
        var run = await DurableChaosProcess.RunAsync(
            "--jobs", "3000", "--workers", "3", "--producers", "64", "--rate", "600", "--bursts", "--kill-interval-ms", "1000", "--min-kills", "5", "--timeout-s", "150");
        output.WriteLine(run.Output);

        AssertNothingLost(run, jobs: 3000);
        Assert.True(run.Number("kills") >= 5, $"Only {run["kills"]} kills.\n{run.Output}");

        // The kills hit workers that held jobs, and survivors took those jobs over.
        Assert.True(run.Number("kills_with_pending") >= 1, $"No kill left entries pending: the kills missed the load.\n{run.Output}");
        Assert.Equal(0, run.Number("reclaims_unfinished"));
        Assert.Equal(0, run.ExitCode);
    }

    [Fact]
    public async Task RedisSigkilledAndRestartedMidLoad_NothingEnqueueAsyncAcknowledgedIsLost()
    {
        var run = await DurableChaosProcess.RunAsync(
            "--jobs", "2000", "--workers", "3", "--producers", "64", "--rate", "400", "--bursts", "--kill-interval-ms", "1500", "--min-kills", "3", "--restart-redis", "--timeout-s", "150");
        output.WriteLine(run.Output);

        Assert.Equal(1, run.Number("redis_restarts"));
        AssertNothingLost(run, jobs: 2000);
        Assert.True(run.Number("kills") >= 3, $"Only {run["kills"]} kills.\n{run.Output}");
        Assert.Equal(0, run.ExitCode);
    }

    private static void AssertNothingLost(DurableChaosProcess run, int jobs)
    {
        Assert.True(run.Number("lost") == 0, $"{run["lost"]} acknowledged jobs never completed.\n{run.Output}");
        Assert.True(run.Number("acknowledged") == jobs, $"Only {run["acknowledged"]} of {jobs} jobs were acknowledged.\n{run.Output}");

        // Killed no more than a few times each, no job may be poisoned; and nothing is left behind in Redis.
        Assert.True(run.Number("dead") == 0, $"{run["dead"]} jobs were dead-lettered.\n{run.Output}");
        Assert.Equal(0, run.Number("left_in_stream"));
        Assert.Equal(0, run.Number("left_pending"));
        Assert.Equal(0, run.Number("left_delayed"));
        Assert.Equal(0, run.Number("worker_crashes"));
    }
}
