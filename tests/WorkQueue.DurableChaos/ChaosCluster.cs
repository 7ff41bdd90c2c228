using System.Diagnostics;
using System.Globalization;
using StackExchange.Redis;

namespace WorkQueue.DurableChaos;

/// <summary>
/// The <c>--cluster</c> run's servers: a Redis Cluster of three masters and three replicas (each a
/// <see cref="ChaosRedisServer"/>, <c>--cluster-enabled yes</c>, append-only file <c>everysec</c>, own directory), joined
/// by <c>redis-cli --cluster create --cluster-replicas 1</c>. Clients connect with <see cref="Configuration"/> (the
/// masters' endpoints). <see cref="MoveSlotAsync"/> moves the slot of a hash tag (a durable queue's keys share
/// <c>{name}</c>) to another master as <c>redis-cli --cluster reshard</c> does. (tests/Shared/RedisCluster.cs is the test
/// projects' fixture of the same; it needs xunit, which this program lacks.)
/// </summary>
internal sealed class ChaosCluster : IAsyncDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    private readonly List<ChaosRedisServer> _masters = [];
    private readonly List<ChaosRedisServer> _replicas = [];
    private ConnectionMultiplexer? _admin;

    private ChaosCluster()
    {
    }

    public IReadOnlyList<ChaosRedisServer> Masters => _masters;

    public IReadOnlyList<ChaosRedisServer> Replicas => _replicas;

    /// <summary>Gets the StackExchange.Redis configuration: the masters' endpoints.</summary>
    public string Configuration => string.Join(',', _masters.Select(m => m.Configuration));

    private IEnumerable<ChaosRedisServer> Nodes => _masters.Concat(_replicas);

    public static async Task<ChaosCluster> StartAsync(string directory)
    {
        var cluster = new ChaosCluster();
        try
        {
            var nodes = new List<ChaosRedisServer>();
            for (int i = 0; i < 6; i++)
            {
                string dir = Directory.CreateDirectory(Path.Combine(directory, $"node-{i}")).FullName;
                var node = new ChaosRedisServer(
                    ChaosRedisServer.FreePort(), dir, "everysec",
                    "--cluster-enabled", "yes", "--cluster-config-file", Path.Combine(dir, "nodes.conf"), "--cluster-node-timeout", "5000");
                nodes.Add(node);
                await node.StartAsync();
            }

            // redis-cli makes the first three masters and gives each one of the others as its replica.
            cluster._masters.AddRange(nodes.Take(3));
            cluster._replicas.AddRange(nodes.Skip(3));
            await RunRedisCliAsync(["--cluster", "create", .. nodes.Select(n => n.Configuration), "--cluster-replicas", "1", "--cluster-yes"]);
            var admin = new ConfigurationOptions { AbortOnConnectFail = false, AllowAdmin = true };
            foreach (var node in nodes)
            {
                admin.EndPoints.Add(node.Configuration);
            }

            cluster._admin = await ConnectionMultiplexer.ConnectAsync(admin);
            await cluster.WaitUntilStableAsync();
            return cluster;
        }
        catch
        {
            await cluster.DisposeAsync();
            throw;
        }
    }

    /// <summary>
    /// Moves the slot of <paramref name="hashTag"/> to the next master: <c>SETSLOT IMPORTING</c> on the target,
    /// <c>MIGRATING</c> on the source, <c>MIGRATE</c> of its keys <paramref name="batch"/> at a time, <c>SETSLOT NODE</c> on
    /// the target, the source and the third master; then waits until every node agrees.
    /// </summary>
    public async Task<SlotMove> MoveSlotAsync(string hashTag, int batch)
    {
        int slot = (int)await Server(_masters[0]).ExecuteAsync("CLUSTER", "KEYSLOT", hashTag);
        var source = await MasterOfAsync(slot);
        var target = _masters[(_masters.IndexOf(source) + 1) % _masters.Count];
        string sourceId = (string)(await Server(source).ExecuteAsync("CLUSTER", "MYID"))!;
        string targetId = (string)(await Server(target).ExecuteAsync("CLUSTER", "MYID"))!;
        var clock = Stopwatch.StartNew();
        await Server(target).ExecuteAsync("CLUSTER", "SETSLOT", slot, "IMPORTING", sourceId);
        await Server(source).ExecuteAsync("CLUSTER", "SETSLOT", slot, "MIGRATING", targetId);
        int keys = 0;
        while (true)
        {
            var names = (RedisResult[])(await Server(source).ExecuteAsync("CLUSTER", "GETKEYSINSLOT", slot, batch))!;
            if (names.Length == 0)
            {
                break;
            }

            await Server(source).ExecuteAsync("MIGRATE", ["127.0.0.1", target.Port, "", 0, 10_000, "KEYS", .. names.Select(n => (object)(string)n!)]);
            keys += names.Length;
        }

        // The target first, so that it serves the slot before the source starts redirecting to it with MOVED.
        await Server(target).ExecuteAsync("CLUSTER", "SETSLOT", slot, "NODE", targetId);
        await Server(source).ExecuteAsync("CLUSTER", "SETSLOT", slot, "NODE", targetId);
        foreach (var other in _masters.Where(m => m != source && m != target))
        {
            await Server(other).ExecuteAsync("CLUSTER", "SETSLOT", slot, "NODE", targetId);
        }

        var migrated = clock.Elapsed;
        await WaitUntilStableAsync();
        return new SlotMove(slot, source.Port, target.Port, keys, migrated);
    }

    public async ValueTask DisposeAsync()
    {
        if (_admin is not null)
        {
            await _admin.DisposeAsync();
        }

        foreach (var node in Nodes)
        {
            node.Dispose();
        }
    }

    private IServer Server(ChaosRedisServer node) => _admin!.GetServer(node.Configuration);

    private static async Task RunRedisCliAsync(string[] arguments)
    {
        var start = new ProcessStartInfo("redis-cli") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (string arg in arguments)
        {
            start.ArgumentList.Add(arg);
        }

        using var process = Process.Start(start) ?? throw new InvalidOperationException("redis-cli did not start.");
        var output = process.StandardOutput.ReadToEndAsync();
        var error = process.StandardError.ReadToEndAsync();
        await process.WaitForExitAsync().WaitAsync(Timeout);
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"redis-cli {string.Join(' ', arguments)} exited with {process.ExitCode}: {await output}{await error}");
        }
    }

    private async Task<ChaosRedisServer> MasterOfAsync(int slot)
    {
        foreach (var master in _masters)
        {
            string nodes = (string)(await Server(master).ExecuteAsync("CLUSTER", "NODES"))!;
            string line = nodes.Split('\n').Single(l => l.Contains("myself", StringComparison.Ordinal));
            foreach (string part in line.Trim().Split(' ').Skip(8).Where(p => !p.StartsWith('[')))
            {
                string[] bounds = part.Split('-');
                int first = int.Parse(bounds[0], CultureInfo.InvariantCulture);
                int last = bounds.Length > 1 ? int.Parse(bounds[1], CultureInfo.InvariantCulture) : first;
                if (first <= slot && slot <= last)
                {
                    return master;
                }
            }
        }

        throw new InvalidOperationException($"No master says it owns slot {slot}.");
    }

    /// <summary>Every node <c>cluster_state:ok</c> and knowing all six, every replica's link up, every master seeing the same slots.</summary>
    private async Task WaitUntilStableAsync()
    {
        var clock = Stopwatch.StartNew();
        string why = string.Empty;
        while (true)
        {
            try
            {
                why = await UnstableAsync();
                if (why.Length == 0)
                {
                    return;
                }
            }
            catch (Exception ex) when (ex is RedisException or TimeoutException)
            {
                why = ex.Message;
            }

            if (clock.Elapsed > Timeout)
            {
                throw new InvalidOperationException($"The cluster did not settle within {Timeout.TotalSeconds} s: {why}");
            }

            await Task.Delay(50);
        }
    }

    private async Task<string> UnstableAsync()
    {
        foreach (var node in Nodes)
        {
            string info = (string)(await Server(node).ExecuteAsync("CLUSTER", "INFO"))!;
            if (!info.Contains("cluster_state:ok", StringComparison.Ordinal) || !info.Contains("cluster_known_nodes:6\r", StringComparison.Ordinal))
            {
                return $"node {node.Port} not ok or not knowing all nodes";
            }
        }

        foreach (var replica in _replicas)
        {
            string info = (string)(await Server(replica).ExecuteAsync("INFO", "replication"))!;
            if (!info.Contains("master_link_status:up", StringComparison.Ordinal))
            {
                return $"replica {replica.Port} link not up";
            }
        }

        string? agreed = null;
        foreach (var master in _masters)
        {
            string nodes = (string)(await Server(master).ExecuteAsync("CLUSTER", "NODES"))!;
            string view = string.Join(';', nodes.Split('\n', StringSplitOptions.RemoveEmptyEntries)
                .Select(l => l.Trim().Split(' '))
                .Where(f => f[2].Contains("master", StringComparison.Ordinal))
                .Select(f => f[1].Split('@')[0] + "=" + string.Join(',', f.Skip(8).Where(p => !p.StartsWith('['))))
                .Order(StringComparer.Ordinal));
            if (agreed is not null && view != agreed)
            {
                return $"master {master.Port} sees {view}, another {agreed}";
            }

            agreed = view;
        }

        return string.Empty;
    }

    /// <summary>What a slot move did: the slot, from and to which master's port, how many keys, how long until every master was told.</summary>
    internal sealed record SlotMove(int Slot, int SourcePort, int TargetPort, int Keys, TimeSpan Migrated);
}
