using System.Globalization;

namespace WorkQueue.Tests.Support;

/// <summary>
/// A primary redis-server, its replicas (<see cref="RedisReplication"/>) and three Sentinels monitoring them, all on
/// loopback free ports, started for the tests and killed afterwards (Sentinels first).
/// </summary>
/// <remarks>
/// <para>
/// Each Sentinel is <c>redis-server {file} --sentinel</c> (what Debian's <c>redis-sentinel</c> package runs, so only
/// redis-server is needed) with <c>sentinel monitor {ServiceName} 127.0.0.1 {primary port} 2</c> and short
/// <c>down-after-milliseconds</c> and <c>failover-timeout</c>, so that a failover takes a few seconds. Its configuration
/// file is in a temporary directory that Sentinel rewrites and <see cref="DisposeAsync"/> deletes.
/// <see cref="StartAsync"/> returns once every Sentinel reports the primary <c>status=ok</c>, with all its replicas and
/// the other Sentinels: a failover can then happen.
/// </para>
/// <para>
/// <see cref="KillPrimaryAndWaitForPromotionAsync"/> SIGKILLs the primary and waits until every Sentinel answers
/// <c>SENTINEL get-master-addr-by-name</c> with a replica's port and that replica reports <c>role:master</c>;
/// <see cref="Primary"/> then is the promoted replica. Clients connect through the Sentinels with
/// <see cref="Configuration"/> (StackExchange.Redis's <c>serviceName=</c>).
/// </para>
/// </remarks>
public sealed class RedisSentinel : IAsyncDisposable
{
    /// <summary>The Sentinels' name of the monitored primary unless <see cref="StartAsync"/> is given another.</summary>
    public const string DefaultServiceName = "workqueue";

    private static readonly TimeSpan DiscoveryTimeout = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan DefaultPromotionTimeout = TimeSpan.FromSeconds(60);

    private readonly string _directory;
    private readonly List<RedisServer> _sentinels = [];
    private readonly List<RedisServer> _restarted = [];
    private int? _killedPort;

    private RedisSentinel(RedisReplication replication, string serviceName, string directory)
    {
        Replication = replication;
        ServiceName = serviceName;
        _directory = directory;
        Primary = replication.Primary;
    }

    /// <summary>Gets the servers: the first primary and its replicas, one of which becomes primary after a failover.</summary>
    public RedisReplication Replication { get; }

    /// <summary>Gets the Sentinels' name of the monitored primary.</summary>
    public string ServiceName { get; }

    /// <summary>Gets the Sentinels (three).</summary>
    public IReadOnlyList<RedisServer> Sentinels => _sentinels;

    /// <summary>Gets the server that is primary now: <see cref="RedisReplication.Primary"/>, or the replica promoted since.</summary>
    public RedisServer Primary { get; private set; }

    /// <summary>Gets a StackExchange.Redis configuration string that connects through the Sentinels: their endpoints and <c>serviceName=</c>.</summary>
    public string Configuration => string.Join(',', _sentinels.Select(s => s.Configuration)) + ",serviceName=" + ServiceName;

    /// <summary>Starts a primary with <paramref name="replicas"/> replicas and three Sentinels, and waits until the Sentinels see them all.</summary>
    /// <param name="replicas">How many replicas (at least one, the one that gets promoted).</param>
    /// <param name="serviceName">The Sentinels' name of the primary.</param>
    /// <param name="downAfter">Sentinel's <c>down-after-milliseconds</c>: how long the primary must not answer before a Sentinel thinks it down.</param>
    /// <param name="failoverTimeout">Sentinel's <c>failover-timeout</c> (a failed failover is retried after twice this).</param>
    public static async Task<RedisSentinel> StartAsync(
        int replicas = 1, string serviceName = DefaultServiceName, TimeSpan? downAfter = null, TimeSpan? failoverTimeout = null)
    {
        var replication = await RedisReplication.StartAsync(replicas);
        string directory = Path.Combine(Path.GetTempPath(), "workqueue-sentinel-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(directory);
        var sentinel = new RedisSentinel(replication, serviceName, directory);
        try
        {
            for (int i = 0; i < 3; i++)
            {
                int port = RedisServer.FreePort();
                string file = Path.Combine(directory, $"sentinel-{port}.conf");
                await File.WriteAllLinesAsync(file,
                [
                    $"port {port}",
                    "bind 127.0.0.1",
                    "daemonize no",
                    $"dir {directory}",
                    $"sentinel monitor {serviceName} 127.0.0.1 {replication.Primary.Port} 2",
                    $"sentinel down-after-milliseconds {serviceName} {Milliseconds(downAfter ?? TimeSpan.FromSeconds(1))}",
                    $"sentinel failover-timeout {serviceName} {Milliseconds(failoverTimeout ?? TimeSpan.FromSeconds(5))}",
                    $"sentinel parallel-syncs {serviceName} 1",
                ]);
                sentinel._sentinels.Add(await RedisServer.StartSentinelAsync(file, port));
            }

            await sentinel.WaitForDiscoveryAsync();
            return sentinel;
        }
        catch
        {
            await sentinel.DisposeAsync();
            throw;
        }
    }

    /// <summary>Asks one Sentinel for the primary's address (<c>SENTINEL get-master-addr-by-name</c>): its port, or <see langword="null"/> when it knows none.</summary>
    public async Task<int?> PrimaryPortAsync(RedisServer sentinel)
    {
        string?[]? address = await sentinel.CommandArrayAsync("SENTINEL", "get-master-addr-by-name", ServiceName);
        return address is [_, string port] ? int.Parse(port, CultureInfo.InvariantCulture) : null;
    }

    /// <summary>
    /// Kills <see cref="Primary"/> (SIGKILL) and waits until every Sentinel names a replica as the primary and that replica
    /// reports <c>role:master</c>; returns it (now <see cref="Primary"/>).
    /// </summary>
    /// <param name="timeout">How long to wait for the promotion (60 s unless given).</param>
    public async Task<RedisServer> KillPrimaryAndWaitForPromotionAsync(TimeSpan? timeout = null)
    {
        await Primary.KillAsync();
        return await WaitForPromotionAsync(timeout);
    }

    /// <summary>
    /// Waits until every Sentinel names a replica as the primary and that replica reports <c>role:master</c>, after
    /// <see cref="Primary"/> was killed (<see cref="RedisServer.KillAsync"/>) by the test itself, which can look at what
    /// happens while there is no primary; returns the promoted replica (now <see cref="Primary"/>).
    /// </summary>
    /// <param name="timeout">How long to wait for the promotion (60 s unless given).</param>
    public async Task<RedisServer> WaitForPromotionAsync(TimeSpan? timeout = null)
    {
        int oldPort = Primary.Port;
        var promoted = await WaitForPromotionAsync(oldPort, timeout ?? DefaultPromotionTimeout);
        _killedPort = oldPort;
        return promoted;
    }

    /// <summary>
    /// Asks a Sentinel for a failover while the primary is alive (<c>SENTINEL FAILOVER</c>): Sentinel promotes a replica
    /// and turns the old primary into its replica (<c>REPLICAOF</c>), whose clients' connections stay open and get
    /// <c>READONLY</c> for writes. Waits until the Sentinels name the replica and the old primary reports
    /// <c>role:slave</c>; returns the promoted replica (now <see cref="Primary"/>).
    /// </summary>
    /// <param name="timeout">How long to wait for the switch (60 s unless given).</param>
    public async Task<RedisServer> FailoverAsync(TimeSpan? timeout = null)
    {
        var old = Primary;
        await _sentinels[0].CommandAsync("SENTINEL", "FAILOVER", ServiceName);
        var promoted = await WaitForPromotionAsync(old.Port, timeout ?? DefaultPromotionTimeout);
        var deadline = DateTime.UtcNow + (timeout ?? DefaultPromotionTimeout);
        while (await old.InfoFieldAsync("replication", "role") != "slave")
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new InvalidOperationException($"The old primary on port {old.Port} was not demoted to a replica of port {promoted.Port}.");
            }

            await Task.Delay(50);
        }

        return promoted;
    }

    /// <summary>
    /// Starts a new redis-server on the killed primary's port as a replica of the promoted one (<c>--replicaof</c>), as
    /// the old primary comes back after a failover (Sentinel would demote it so; here it starts demoted, so no write can
    /// reach it as a primary), and waits until its link is up. Clients still pointed at that address get
    /// <c>READONLY</c> for writes. Killed with the rest on dispose.
    /// </summary>
    public async Task<RedisServer> RestartOldPrimaryAsReplicaAsync()
    {
        int port = _killedPort ?? throw new InvalidOperationException("No primary was killed and replaced yet.");
        var server = await RedisServer.StartAsync(["--replicaof", "127.0.0.1", Primary.Port.ToString(CultureInfo.InvariantCulture)], port);
        _restarted.Add(server);
        var deadline = DateTime.UtcNow + DiscoveryTimeout;
        while (await server.InfoFieldAsync("replication", "master_link_status") != "up")
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new InvalidOperationException($"The old primary restarted on port {port} did not link to the new one within {DiscoveryTimeout.TotalSeconds} s.");
            }

            await Task.Delay(50);
        }

        return server;
    }

    /// <summary>Kills the Sentinels, then the servers, and deletes the Sentinels' directory.</summary>
    public async ValueTask DisposeAsync()
    {
        foreach (var sentinel in _sentinels)
        {
            await sentinel.DisposeAsync();
        }

        foreach (var server in _restarted)
        {
            await server.DisposeAsync();
        }

        await Replication.DisposeAsync();
        try
        {
            Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
            // A leftover temporary directory is harmless; failing a test's cleanup over it is not.
        }
    }

    private static string Milliseconds(TimeSpan span) => ((long)span.TotalMilliseconds).ToString(CultureInfo.InvariantCulture);

    private async Task<RedisServer> WaitForPromotionAsync(int oldPort, TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (true)
        {
            var promoted = await PromotedReplicaAsync(oldPort);
            if (promoted is not null)
            {
                Primary = promoted;
                return promoted;
            }

            if (DateTime.UtcNow > deadline)
            {
                var states = new List<string>();
                foreach (var sentinel in _sentinels)
                {
                    states.Add($"{sentinel.Port}: {await sentinel.InfoFieldAsync("sentinel", "master0")}");
                }

                throw new InvalidOperationException(
                    $"The Sentinels did not promote a replica of port {oldPort} within {timeout.TotalSeconds} s ({string.Join("; ", states)}).");
            }

            await Task.Delay(50);
        }
    }

    private async Task<RedisServer?> PromotedReplicaAsync(int oldPort)
    {
        int? agreed = null;
        foreach (var sentinel in _sentinels)
        {
            int? port = await PrimaryPortAsync(sentinel);
            if (port is null || port == oldPort || (agreed is not null && agreed != port))
            {
                return null;
            }

            agreed = port;
        }

        var replica = Replication.Replicas.FirstOrDefault(r => r.Port == agreed);
        return replica is not null && await replica.InfoFieldAsync("replication", "role") == "master" ? replica : null;
    }

    private async Task WaitForDiscoveryAsync()
    {
        // master0:name=workqueue,status=ok,address=127.0.0.1:6379,slaves=1,sentinels=3
        string expected = $"status=ok,address={Primary.Configuration},slaves={Replication.Replicas.Count},sentinels={_sentinels.Count}";
        var deadline = DateTime.UtcNow + DiscoveryTimeout;
        foreach (var sentinel in _sentinels)
        {
            string? state;
            while ((state = await sentinel.InfoFieldAsync("sentinel", "master0"))?.EndsWith(expected, StringComparison.Ordinal) != true)
            {
                if (DateTime.UtcNow > deadline)
                {
                    throw new InvalidOperationException(
                        $"Sentinel on port {sentinel.Port} did not see the primary, its replicas and the other Sentinels within {DiscoveryTimeout.TotalSeconds} s ({state}).");
                }

                await Task.Delay(50);
            }
        }
    }
}
