using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Redis;

/// <summary>
/// Redis from WorkQueue jobs while the CLR thread pool is starved (capped at its minimum, every thread blocked, 300
/// work items waiting), with and without <see cref="RedisWarmupOptions.DedicatedIoThreads"/>. Each test runs
/// tests/WorkQueue.RedisProbe in a child process: starving the pool and StackExchange.Redis's process-wide flag would
/// disturb every other test in this process.
/// </summary>
public sealed class StarvedThreadPoolTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task SyncCallFromWorker_DedicatedIoThreads_AnswersWhilePoolIsStarved()
    {
        var probe = await RedisProbeProcess.RunAsync("sync-dedicated", redis.Server.Port);

        AssertRanStarved(probe, expectedIoThreads: "dedicated");
        Assert.Equal("False", probe["job.onPoolThread"]);
        for (int i = 0; i < 5; i++)
        {
            Assert.StartsWith("ok before-starvation ", probe[$"sync.{i}"]);
        }

        Assert.Equal("True", probe["job.endedWhileStarved"]);
    }

    [Fact]
    public async Task AsyncJobAwaitingRedis_DedicatedIoThreads_CompletesOnItsWorkerWithoutPoolThreads()
    {
        var probe = await RedisProbeProcess.RunAsync("async-dedicated", redis.Server.Port);

        AssertRanStarved(probe, expectedIoThreads: "dedicated");
        Assert.Equal("False", probe["job.onPoolThread"]);
        for (int i = 0; i < 5; i++)
        {
            Assert.StartsWith("poolThread=False sameWorker=True ", probe[$"async.{i}"]);
        }

        Assert.Equal("2", probe["async.value"]);
        Assert.Equal("2", probe["async.deleted"]);
        Assert.False(probe.Findings.ContainsKey("async.error"), probe.Output);
        Assert.Equal("True", probe["job.endedWhileStarved"]);
    }

    [Fact]
    public async Task DurableQueue_DedicatedIoThreads_StoresRunsAndAcknowledgesJobsWhilePoolIsStarved()
    {
        var probe = await RedisProbeProcess.RunAsync("durable-dedicated", redis.Server.Port);

        AssertRanStarved(probe, expectedIoThreads: "dedicated");
        Assert.Equal("True", probe["durable.warmedUp"]);
        Assert.Equal("20", probe["durable.storedWhileStarved"]);
        Assert.Equal("5", probe["durable.keyedStoredWhileStarved"]);
        Assert.Equal("True", probe["job.endedWhileStarved"]);
        Assert.Equal("0", probe["durable.streamLengthWhileStarved"]);
    }

    [Fact]
    public async Task SyncCallFromWorker_ThreadPoolIo_TimesOutWhilePoolIsStarved()
    {
        var probe = await RedisProbeProcess.RunAsync("sync-pool", redis.Server.Port);

        AssertRanStarved(probe, expectedIoThreads: "threadPool");
        Assert.Equal("False", probe["flag"]);
        Assert.StartsWith("RedisTimeoutException after ", probe["sync.0"]);
        Assert.Contains("Timeout performing GET", probe["sync.0"]);
        Assert.Contains("RedisWarmupService[304]", probe.Output);
    }

    [Fact]
    public async Task AsyncJobAwaitingRedis_ThreadPoolIo_StuckWhileStarvedAndResumesOnceThePoolFrees()
    {
        var probe = await RedisProbeProcess.RunAsync("async-pool", redis.Server.Port);

        AssertRanStarved(probe, expectedIoThreads: "threadPool");
        // Not even a RedisTimeoutException while starved: noticing the timeout needs a pool thread too.
        Assert.Equal("False", probe["job.endedWhileStarved"]);
        Assert.Equal("True", probe["job.endedAfterRelease"]);
        // Once the pool frees, the first await resumes on the worker, with the reply or with the timeout (whichever of
        // the two the freed pool processes first).
        string firstAwait = probe.Findings.GetValueOrDefault("async.0") ?? probe["async.error"];
        Assert.Matches("^(poolThread=False sameWorker=True |RedisTimeoutException poolThread=False sameWorker=True: )", firstAwait);
    }

    [Theory]
    [InlineData("flag-switched-off")]
    [InlineData("flag-switched-off-start-not-ready")]
    public async Task Warmup_FlagSwitchedOffBeforeConnecting_StartupFailsSayingSoInEitherFailureMode(string scenario)
    {
        var probe = await RedisProbeProcess.RunAsync(scenario, redis.Server.Port);

        Assert.Equal(0, probe.ExitCode);
        Assert.Equal("failed", probe["startup"]);
        string error = probe["startup.error"];
        Assert.Contains("RedisWarmupOptions.DedicatedIoThreads is true", error);
        Assert.Contains($"127.0.0.1:{redis.Server.Port}", error);
        Assert.Contains("CLR thread pool", error);
        Assert.Contains("process-wide", error);
    }

    private static void AssertRanStarved(RedisProbeProcess probe, string expectedIoThreads)
    {
        Assert.True(probe.ExitCode == 0, $"The probe exited with {probe.ExitCode}:\n{probe.Output}");
        Assert.Equal("ok", probe["startup"]);
        Assert.Equal(expectedIoThreads, probe["ioThreads"]);
        Assert.Contains(expectedIoThreads == "dedicated" ? "RedisWarmupService[303]" : "RedisWarmupService[304]", probe.Output);
        Assert.True(int.Parse(probe["pool.blocked"]) >= int.Parse(probe["pool.maxWorkerThreads"]), probe.Output);
        Assert.True(int.Parse(probe["pool.pending"]) > 0, probe.Output);
        Assert.True(int.Parse(probe["pool.pendingAtEnd"]) > 0, $"the pool was not starved until the job ended:\n{probe.Output}");
        Assert.Equal("True", probe["job.endedAfterRelease"]);
    }
}
