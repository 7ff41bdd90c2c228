using System.Diagnostics;
using System.Globalization;

namespace WorkQueue.Tests.Support;

/// <summary>
/// A Redis Cluster on loopback: three masters, each with a replica, every node a <see cref="RedisServer"/> on a free port
/// (<c>--cluster-enabled yes</c>, AOF on, its own directory), joined by <c>redis-cli --cluster create</c>; started for
/// the tests and killed afterwards.
/// </summary>
/// <remarks>
/// <para>
/// <see cref="StartAsync"/> returns once every node reports <c>cluster_state:ok</c>, knows every other node and sees
/// every master's slots, and every replica's link is up. Clients connect with <see cref="Configuration"/> (the masters'
/// endpoints; StackExchange.Redis finds the rest and follows <c>MOVED</c>/<c>ASK</c>).
/// </para>
/// <para>
/// <see cref="MoveSlotAsync"/> moves one slot to another master as <c>redis-cli --cluster reshard</c> does, step by step,
/// so that a test can move a queue's slot (a durable queue's keys share the hash tag <c>{name}</c>: one slot) while it
/// runs: <c>CLUSTER SETSLOT IMPORTING</c> on the target, <c>MIGRATING</c> on the source, <c>MIGRATE</c> of the slot's
/// keys in batches (an optional pause between batches widens the window in which clients get <c>ASK</c> and
/// <c>TRYAGAIN</c>), then <c>SETSLOT NODE</c> on the target, the source and the other masters.
/// </para>
/// </remarks>
public sealed class RedisCluster : IAsyncDisposable
{
    private static readonly TimeSpan ClusterTimeout = TimeSpan.FromSeconds(60);

    private readonly string _directory;
    private readonly List<RedisServer> _masters = [];
    private readonly List<RedisServer> _replicas = [];

    private RedisCluster(string directory)
    {
        _directory = directory;
    }

    /// <summary>Gets the masters, as <c>redis-cli --cluster create</c> made them (each owns a third of the slots at the start).</summary>
    public IReadOnlyList<RedisServer> Masters => _masters;

    /// <summary>Gets the replicas (one per master).</summary>
    public IReadOnlyList<RedisServer> Replicas => _replicas;

    /// <summary>Gets every node: the masters, then the replicas.</summary>
    public IEnumerable<RedisServer> Nodes => _masters.Concat(_replicas);

    /// <summary>Gets a StackExchange.Redis configuration string: the masters' endpoints.</summary>
    public string Configuration => string.Join(',', _masters.Select(m => m.Configuration));

    /// <summary>Starts <paramref name="masters"/> masters with one replica each and joins them into a cluster.</summary>
    /// <param name="masters">How many masters (at least three, as <c>redis-cli --cluster create</c> wants).</param>
    public static async Task<RedisCluster> StartAsync(int masters = 3)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(masters, 3);
        string directory = Path.Combine(Path.GetTempPath(), "workqueue-cluster-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(directory);
        var cluster = new RedisCluster(directory);
        try
        {
            var nodes = new List<RedisServer>();
            for (int i = 0; i < masters * 2; i++)
            {
                nodes.Add(await StartNodeAsync(directory));
            }

            // redis-cli makes the first `masters` nodes masters and gives each one of the others as its replica.
            await RunRedisCliAsync(["--cluster", "create", .. nodes.Select(n => n.Configuration), "--cluster-replicas", "1", "--cluster-yes"]);
            cluster._masters.AddRange(nodes.Take(masters));
            cluster._replicas.AddRange(nodes.Skip(masters));
            await cluster.WaitUntilStableAsync();
            return cluster;
        }
        catch
        {
            await cluster.DisposeAsync();
            throw;
        }
    }

    /// <summary>Gets the slot of <paramref name="key"/> (<c>CLUSTER KEYSLOT</c>: of its hash tag, when it has one).</summary>
    public async Task<int> SlotOfAsync(string key) =>
        int.Parse(await _masters[0].CommandAsync("CLUSTER", "KEYSLOT", key) ?? "-1", CultureInfo.InvariantCulture);

    /// <summary>Gets the master that owns <paramref name="slot"/>, as that master itself says (<c>CLUSTER NODES</c>, the line marked <c>myself</c>).</summary>
    public async Task<RedisServer> MasterOfAsync(int slot)
    {
        foreach (var master in _masters)
        {
            if ((await OwnSlotsAsync(master)).Any(r => r.First <= slot && slot <= r.Last))
            {
                return master;
            }
        }

        throw new InvalidOperationException($"No master says it owns slot {slot}.");
    }

    /// <summary>
    /// Moves <paramref name="slot"/> with its keys to <paramref name="target"/>, as <c>redis-cli --cluster reshard</c>
    /// does: <c>SETSLOT IMPORTING</c> on the target, <c>SETSLOT MIGRATING</c> on the source, <c>MIGRATE</c> of the keys
    /// <paramref name="batch"/> at a time until the slot is empty on the source, <c>SETSLOT NODE</c> on the target, the
    /// source and the other masters; then waits until every master agrees. Returns what it moved.
    /// </summary>
    /// <param name="slot">The slot.</param>
    /// <param name="target">The master that gets it (not its owner).</param>
    /// <param name="batch">How many keys one <c>MIGRATE</c> moves.</param>
    /// <param name="pauseBetweenBatches">A pause after each batch, to hold the slot half-moved a while (clients get <c>ASK</c> for moved keys).</param>
    public async Task<SlotMove> MoveSlotAsync(int slot, RedisServer target, int batch = 100, TimeSpan? pauseBetweenBatches = null)
    {
        var source = await MasterOfAsync(slot);
        if (source == target)
        {
            throw new ArgumentException($"Slot {slot} is already on the master on port {target.Port}.", nameof(target));
        }

        string slotText = slot.ToString(CultureInfo.InvariantCulture);
        string sourceId = await IdOfAsync(source);
        string targetId = await IdOfAsync(target);
        var clock = Stopwatch.StartNew();
        await target.CommandAsync("CLUSTER", "SETSLOT", slotText, "IMPORTING", sourceId);
        await source.CommandAsync("CLUSTER", "SETSLOT", slotText, "MIGRATING", targetId);
        int keys = 0;
        int batches = 0;
        while (true)
        {
            string?[] names = await source.CommandArrayAsync("CLUSTER", "GETKEYSINSLOT", slotText, batch.ToString(CultureInfo.InvariantCulture)) ?? [];
            if (names.Length == 0)
            {
                break;
            }

            await source.CommandAsync(["MIGRATE", "127.0.0.1", target.Port.ToString(CultureInfo.InvariantCulture), "", "0", "10000", "KEYS", .. names.Select(n => n!)]);
            keys += names.Length;
            batches++;
            if (pauseBetweenBatches is { } pause)
            {
                await Task.Delay(pause);
            }
        }

        // The target first, so that it serves the slot before the source starts redirecting to it with MOVED.
        await target.CommandAsync("CLUSTER", "SETSLOT", slotText, "NODE", targetId);
        await source.CommandAsync("CLUSTER", "SETSLOT", slotText, "NODE", targetId);
        foreach (var other in _masters.Where(m => m != source && m != target))
        {
            await other.CommandAsync("CLUSTER", "SETSLOT", slotText, "NODE", targetId);
        }

        var migrated = clock.Elapsed;
        await WaitUntilStableAsync();
        return new SlotMove(slot, source, target, keys, batches, migrated);
    }

    /// <summary>
    /// Starts moving <paramref name="slot"/> to <paramref name="target"/> and stops there: <c>SETSLOT IMPORTING</c> on the
    /// target, <c>MIGRATING</c> on the source, no key moved. The source then runs a command whose keys it has and answers
    /// <c>ASK</c> for a key it lacks (a key not yet written, or one moved by <c>MIGRATE</c>), as during a real move.
    /// Returns the source.
    /// </summary>
    public async Task<RedisServer> StartMigratingAsync(int slot, RedisServer target)
    {
        var source = await MasterOfAsync(slot);
        string slotText = slot.ToString(CultureInfo.InvariantCulture);
        await target.CommandAsync("CLUSTER", "SETSLOT", slotText, "IMPORTING", await IdOfAsync(source));
        await source.CommandAsync("CLUSTER", "SETSLOT", slotText, "MIGRATING", await IdOfAsync(target));
        return source;
    }

    /// <summary>Kills every node and deletes the cluster's directory.</summary>
    public async ValueTask DisposeAsync()
    {
        foreach (var node in _replicas.Concat(_masters))
        {
            await node.DisposeAsync();
        }

        try
        {
            Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
            // A leftover temporary directory is harmless; failing a test's cleanup over it is not.
        }
    }

    private static async Task<RedisServer> StartNodeAsync(string directory)
    {
        int port = RedisServer.FreePort();
        string dir = Path.Combine(directory, port.ToString(CultureInfo.InvariantCulture));
        Directory.CreateDirectory(dir);
        return await RedisServer.StartAsync(
        [
            "--cluster-enabled", "yes",
            "--cluster-config-file", Path.Combine(dir, "nodes.conf"),
            "--cluster-node-timeout", "5000",
            "--appendonly", "yes",
            "--dir", dir,
        ], port);
    }

    private static async Task RunRedisCliAsync(string[] arguments)
    {
        var start = new ProcessStartInfo("redis-cli", arguments)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        Process process;
        try
        {
            process = Process.Start(start) ?? throw new InvalidOperationException("redis-cli did not start.");
        }
        catch (System.ComponentModel.Win32Exception ex)
        {
            throw new InvalidOperationException("The cluster tests need redis-cli on PATH (Debian's redis-tools, which redis-server depends on).", ex);
        }

        using (process)
        {
            var output = process.StandardOutput.ReadToEndAsync();
            var error = process.StandardError.ReadToEndAsync();
            await process.WaitForExitAsync().WaitAsync(ClusterTimeout);
            if (process.ExitCode != 0)
            {
                throw new InvalidOperationException($"redis-cli {string.Join(' ', arguments)} exited with {process.ExitCode}: {await output}{await error}");
            }
        }
    }

    private static async Task<string> IdOfAsync(RedisServer node) =>
        await node.CommandAsync("CLUSTER", "MYID") ?? throw new InvalidOperationException($"Node on port {node.Port} has no id.");

    /// <summary>The slot ranges <paramref name="master"/> says are its own (the <c>myself</c> line of <c>CLUSTER NODES</c>; importing/migrating marks left out).</summary>
    private static async Task<List<(int First, int Last)>> OwnSlotsAsync(RedisServer master)
    {
        // <id> <ip:port@cport> myself,master - 0 0 1 connected 0-5460 [5461->-<id>]
        string nodes = await master.CommandAsync("CLUSTER", "NODES") ?? string.Empty;
        string line = nodes.Split('\n').Single(l => l.Contains("myself", StringComparison.Ordinal));
        var ranges = new List<(int, int)>();
        foreach (string part in line.Trim().Split(' ').Skip(8).Where(p => !p.StartsWith('[')))
        {
            string[] bounds = part.Split('-');
            int first = int.Parse(bounds[0], CultureInfo.InvariantCulture);
            ranges.Add((first, bounds.Length > 1 ? int.Parse(bounds[1], CultureInfo.InvariantCulture) : first));
        }

        return ranges;
    }

    /// <summary>
    /// Waits until every node says <c>cluster_state:ok</c> and knows every node, every master sees the same owner of
    /// each slot as the owner does (its <c>CLUSTER NODES</c> lists every master's slots identically), and every
    /// replica's link is up.
    /// </summary>
    private async Task WaitUntilStableAsync()
    {
        var deadline = DateTime.UtcNow + ClusterTimeout;
        string last = string.Empty;
        while (true)
        {
            (bool stable, last) = await StableAsync();
            if (stable)
            {
                return;
            }

            if (DateTime.UtcNow > deadline)
            {
                throw new InvalidOperationException($"The cluster did not settle within {ClusterTimeout.TotalSeconds} s: {last}");
            }

            await Task.Delay(50);
        }
    }

    private async Task<(bool Stable, string Why)> StableAsync()
    {
        int count = _masters.Count + _replicas.Count;
        foreach (var node in Nodes)
        {
            string info = await node.CommandAsync("CLUSTER", "INFO") ?? string.Empty;
            if (!info.Contains("cluster_state:ok", StringComparison.Ordinal))
            {
                return (false, $"node {node.Port} not cluster_state:ok");
            }

            if (!info.Contains($"cluster_known_nodes:{count}\r", StringComparison.Ordinal))
            {
                return (false, $"node {node.Port} does not know all {count} nodes");
            }
        }

        foreach (var replica in _replicas)
        {
            if (await replica.InfoFieldAsync("replication", "master_link_status") != "up")
            {
                return (false, $"replica {replica.Port} link not up");
            }
        }

        // Every master's view of who owns which slots: the same on all of them.
        string? agreed = null;
        foreach (var master in _masters)
        {
            string view = await SlotViewAsync(master);
            if (agreed is not null && view != agreed)
            {
                return (false, $"master {master.Port} sees slots {view}, another {agreed}");
            }

            agreed = view;
        }

        return (true, string.Empty);
    }

    private static async Task<string> SlotViewAsync(RedisServer node)
    {
        string nodes = await node.CommandAsync("CLUSTER", "NODES") ?? string.Empty;
        return string.Join(';', nodes.Split('\n', StringSplitOptions.RemoveEmptyEntries)
            .Select(l => l.Trim().Split(' '))
            .Where(f => f[2].Contains("master", StringComparison.Ordinal))
            .Select(f => f[1].Split('@')[0] + "=" + string.Join(',', f.Skip(8).Where(p => !p.StartsWith('['))))
            .Order(StringComparer.Ordinal));
    }
}

/// <summary>What <see cref="RedisCluster.MoveSlotAsync"/> did: the slot, from and to which master, how many keys in how many <c>MIGRATE</c>s, and how long until every master was told.</summary>
public sealed record SlotMove(int Slot, RedisServer Source, RedisServer Target, int Keys, int Batches, TimeSpan Migrated);

/// <summary>One Redis Cluster shared by a test class (<see cref="RedisCluster"/>).</summary>
public sealed class RedisClusterFixture : IAsyncLifetime
{
    /// <summary>Gets the cluster.</summary>
    public RedisCluster Cluster { get; private set; } = null!;

    public async ValueTask InitializeAsync() => Cluster = await RedisCluster.StartAsync();

    public async ValueTask DisposeAsync() => await Cluster.DisposeAsync();
}
