using WorkQueue.Packaging.Tests.TestSupport;

namespace WorkQueue.Packaging.Tests;

/// <summary>
/// Publishes tests/WorkQueue.AotSmoke with native AOT (warnings are errors there, so a trim or AOT warning in WorkQueue
/// fails the publish) and runs the native binary against a real redis-server: in-memory jobs, a recurring job,
/// configuration binding, the admin endpoints and a durable queue with source-generated JSON must all work without a JIT.
/// </summary>
/// <remarks>
/// Explicit: the publish takes minutes on two cores (6.6 to 11 minutes of wall clock, 2.6 to 3.2 of CPU, on this busy
/// machine), so CI only builds the app, which runs the trim and AOT analyzers over it and WorkQueue (PublishAot) with
/// warnings as errors. Run it with <c>scripts/aot-smoke.sh</c>, or with the built test program:
/// <code>
/// tests/WorkQueue.Packaging.Tests/bin/Release/net10.0/WorkQueue.Packaging.Tests -class WorkQueue.Packaging.Tests.AotSmokeTests -explicit only
/// </code>
/// It needs clang and zlib1g-dev (the native linker and zlib; .ci/run installs them) and redis-server.
/// </remarks>
public sealed class AotSmokeTests : IClassFixture<RedisServerFixture>, IDisposable
{
    /// <summary>Native AOT compilation of the app and its dependencies takes minutes on two busy cores.</summary>
    private static readonly TimeSpan PublishTimeout = TimeSpan.FromMinutes(12);

    private static readonly TimeSpan RunTimeout = TimeSpan.FromMinutes(2);

    private readonly RedisServerFixture _redis;
    private readonly string _work = Path.Combine(Path.GetTempPath(), $"workqueue-aot-{Guid.NewGuid():N}");

    public AotSmokeTests(RedisServerFixture redis)
    {
        _redis = redis;
    }

    [Fact(Explicit = true)]
    public async Task AotSmokeApp_PublishedNative_RunsEveryJobAndExitsZero()
    {
        string root = PackagedFeed.FindRepositoryRoot();
        string output = Path.Combine(_work, "publish");
        var publish = await DotNetCli.RunAsync(
            root,
            [
                "publish", Path.Combine(root, "tests", "WorkQueue.AotSmoke", "WorkQueue.AotSmoke.csproj"),
                "-c", "Release",
                "-o", output,
                // Its own build folder, so the solution's bin/ and obj/ are left alone.
                "--artifacts-path", Path.Combine(_work, "artifacts"),
                "--disable-build-servers",
                "-tl:off",
            ],
            PublishTimeout);
        publish.EnsureSucceeded("Publishing the AOT smoke app");

        string binary = Path.Combine(output, OperatingSystem.IsWindows() ? "WorkQueue.AotSmoke.exe" : "WorkQueue.AotSmoke");
        Assert.True(File.Exists(binary), $"The publish wrote no native binary at {binary}. Output:{Environment.NewLine}{publish.Output}");
        Assert.False(File.Exists(Path.Combine(output, "WorkQueue.AotSmoke.dll")), "The publish wrote a managed WorkQueue.AotSmoke.dll: it was not a native AOT publish.");

        var run = await RunningProcess.RunAsync(binary, ["--redis", _redis.Server.Configuration], RunTimeout);
        Assert.True(run.Succeeded, $"The native smoke app failed: {run.Describe()}");
        Assert.Contains("AOT SMOKE PASSED", run.Output);
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(_work, recursive: true);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // Best effort: a temp folder left behind is not a test failure.
        }
    }
}
