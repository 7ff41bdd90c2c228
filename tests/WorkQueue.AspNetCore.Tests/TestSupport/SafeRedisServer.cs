using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.TestSupport;

/// <summary>
/// A redis-server of one test's own, set up as production should be (appendonly yes, noeviction: the startup checks
/// find no risk), then with the test's <c>arguments</c>; its files in a directory of its own, deleted with it.
/// </summary>
internal sealed class SafeRedisServer : IAsyncDisposable
{
    private readonly DirectoryInfo _dir;

    private SafeRedisServer(RedisServer redis, DirectoryInfo dir)
    {
        Redis = redis;
        _dir = dir;
    }

    public RedisServer Redis { get; }

    public static async Task<SafeRedisServer> StartAsync(params string[] arguments)
    {
        var dir = Directory.CreateTempSubdirectory("workqueue-redis-");
        var redis = await RedisServer.StartAsync(["--dir", dir.FullName, "--appendonly", "yes", "--maxmemory-policy", "noeviction", .. arguments]);
        return new SafeRedisServer(redis, dir);
    }

    public async ValueTask DisposeAsync()
    {
        await Redis.DisposeAsync();
        _dir.Delete(recursive: true);
    }
}
