using System.Diagnostics;
using System.Globalization;
using System.Net;
using StackExchange.Redis;

namespace WorkQueue.DurableChaos;

/// <summary>
/// The <c>--sentinel</c> run's servers: a primary and two replicas (each a <see cref="ChaosRedisServer"/>, append-only
/// file <c>everysec</c>, own directory) and three Sentinels monitoring them (<c>redis-server {file} --sentinel</c>,
/// <c>down-after-milliseconds</c> 1 s, <c>failover-timeout</c> 5 s). Clients connect with <see cref="Configuration"/>
/// (StackExchange.Redis's <c>serviceName=</c>); <see cref="KillPrimaryAndWaitForPromotionAsync"/> SIGKILLs the primary
/// for good and waits until every Sentinel names the same replica and it says <c>role:master</c>. Two replicas, so
/// that one is left to acknowledge enqueues (replica acknowledgements) once the other has been promoted.
/// (tests/Shared/RedisSentinel.cs is the test projects' fixture of the same; it needs xunit, which this program lacks.)
/// </summary>
internal sealed class ChaosSentinel : IAsyncDisposable
{
    public const string ServiceName = "chaos";

    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    private readonly List<ChaosRedisServer> _sentinels = [];
    private ConnectionMultiplexer? _admin;

    private ChaosSentinel(ChaosRedisServer primary, ChaosRedisServer[] replicas)
    {
        Primary = primary;
        Replicas = replicas;
    }

    public ChaosRedisServer Primary { get; }

    public IReadOnlyList<ChaosRedisServer> Replicas { get; }

    /// <summary>Gets the StackExchange.Redis configuration through the Sentinels.</summary>
    public string Configuration => string.Join(',', _sentinels.Select(s => s.Configuration)) + ",serviceName=" + ServiceName;

    public static async Task<ChaosSentinel> StartAsync(string directory)
    {
        var primary = new ChaosRedisServer(ChaosRedisServer.FreePort(), Subdirectory(directory, "primary"), "everysec");
        await primary.StartAsync();
        var replicas = Enumerable.Range(0, 2).Select(i => new ChaosRedisServer(
            ChaosRedisServer.FreePort(), Subdirectory(directory, $"replica-{i}"), "everysec", "--replicaof", "127.0.0.1", primary.Port.ToString(CultureInfo.InvariantCulture))).ToArray();
        var set = new ChaosSentinel(primary, replicas);
        try
        {
            foreach (var replica in replicas)
            {
                await replica.StartAsync();
            }

            for (int i = 0; i < 3; i++)
            {
                int port = ChaosRedisServer.FreePort();
                string dir = Subdirectory(directory, $"sentinel-{i}");
                string file = Path.Combine(dir, "sentinel.conf");
                await File.WriteAllLinesAsync(file,
                [
                    $"port {port}",
                    "bind 127.0.0.1",
                    $"dir {dir}",
                    $"logfile {Path.Combine(dir, "sentinel.log")}",
                    $"sentinel monitor {ServiceName} 127.0.0.1 {primary.Port} 2",
                    $"sentinel down-after-milliseconds {ServiceName} 1000",
                    $"sentinel failover-timeout {ServiceName} 5000",
                    $"sentinel parallel-syncs {ServiceName} 1",
                ]);
                var sentinel = ChaosRedisServer.Sentinel(port, dir, file);
                set._sentinels.Add(sentinel);
                await sentinel.StartAsync();
            }

            var admin = new ConfigurationOptions { AbortOnConnectFail = false, AllowAdmin = true, CommandMap = CommandMap.Sentinel };
            foreach (var sentinel in set._sentinels)
            {
                admin.EndPoints.Add(sentinel.Configuration);
            }

            set._admin = await ConnectionMultiplexer.ConnectAsync(admin);
            string expected = $"status=ok,address=127.0.0.1:{primary.Port},slaves={replicas.Length},sentinels=3";
            await set.WaitAsync(async () => (await set.MasterLinesAsync()).All(l => l.EndsWith(expected, StringComparison.Ordinal)), "the Sentinels to see the primary, its replica and each other");
            return set;
        }
        catch
        {
            await set.DisposeAsync();
            throw;
        }
    }

    /// <summary>SIGKILLs the primary (it stays down) and returns how long until every Sentinel named the same replica and it said <c>role:master</c>.</summary>
    public async Task<TimeSpan> KillPrimaryAndWaitForPromotionAsync()
    {
        var clock = Stopwatch.StartNew();
        await Primary.KillAsync();
        await WaitAsync(PromotedAsync, "the Sentinels to promote a replica");
        return clock.Elapsed;
    }

    public async ValueTask DisposeAsync()
    {
        if (_admin is not null)
        {
            await _admin.DisposeAsync();
        }

        foreach (var sentinel in _sentinels)
        {
            sentinel.Dispose();
        }

        foreach (var replica in Replicas)
        {
            replica.Dispose();
        }

        Primary.Dispose();
    }

    private static string Subdirectory(string directory, string name) => Directory.CreateDirectory(Path.Combine(directory, name)).FullName;

    private async Task<bool> PromotedAsync()
    {
        int? agreed = null;
        foreach (var sentinel in _sentinels)
        {
            var address = await _admin!.GetServer(sentinel.Configuration).SentinelGetMasterAddressByNameAsync(ServiceName);
            if (address is not IPEndPoint { Port: var port } || port == Primary.Port || (agreed is not null && agreed != port))
            {
                return false;
            }

            agreed = port;
        }

        var promoted = Replicas.FirstOrDefault(r => r.Port == agreed);
        if (promoted is null)
        {
            return false;
        }

        await using var connection = await ConnectionMultiplexer.ConnectAsync(new ConfigurationOptions { EndPoints = { promoted.Configuration }, AllowAdmin = true });
        string info = await connection.GetServer(promoted.Configuration).InfoRawAsync("replication") ?? string.Empty;
        return info.Contains("role:master", StringComparison.Ordinal);
    }

    private async Task<string[]> MasterLinesAsync()
    {
        var lines = new List<string>();
        foreach (var sentinel in _sentinels)
        {
            string info = await _admin!.GetServer(sentinel.Configuration).InfoRawAsync("sentinel") ?? string.Empty;
            lines.Add(info.Split('\n').Select(l => l.TrimEnd('\r')).FirstOrDefault(l => l.StartsWith("master0:", StringComparison.Ordinal)) ?? "none");
        }

        return [.. lines];
    }

    private async Task WaitAsync(Func<Task<bool>> condition, string what)
    {
        var deadline = Stopwatch.StartNew();
        while (true)
        {
            try
            {
                if (await condition())
                {
                    return;
                }
            }
            catch (Exception ex) when (ex is RedisException or TimeoutException)
            {
                // A Sentinel or the replica not answering yet: asked again.
            }

            if (deadline.Elapsed > Timeout)
            {
                throw new InvalidOperationException($"Timed out after {Timeout.TotalSeconds} s waiting for {what} ({string.Join("; ", await MasterLinesAsync())}).");
            }

            await Task.Delay(50);
        }
    }
}
