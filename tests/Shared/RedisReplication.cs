namespace WorkQueue.Tests.Support;

/// <summary>
/// A primary redis-server and its replicas on loopback, each a <see cref="RedisServer"/> on a free port, started for the
/// tests and killed afterwards (replicas first).
/// </summary>
/// <remarks>
/// <para>
/// Each replica is started with <c>--replicaof 127.0.0.1 {primary port}</c>, and <see cref="StartAsync"/> returns once
/// every replica reports <c>master_link_status:up</c> and the primary counts them all as <c>online</c>
/// (<see cref="WaitForLinksAsync"/>), so a <c>WAIT</c> sent then is answered by every replica. No server persists
/// anything (as <see cref="RedisServer"/>), unless <c>primaryArguments</c> or <c>replicaArguments</c> say otherwise.
/// </para>
/// <para>
/// To make a replica stop acknowledging (a <c>WAIT</c> then times out), freeze it with <see cref="RedisServer.Pause"/>
/// (SIGSTOP) and thaw it with <see cref="RedisServer.Resume"/>: the replication link stays open, as a hung replica's
/// does, and the replica catches up when thawed (within <c>repl-timeout</c>, 60 s by default, after which the primary
/// drops the link and the replica resynchronises). <c>CLIENT PAUSE</c> on a replica does not pause its link to the
/// primary, and <c>DEBUG SLEEP</c> blocks the connection that sends it.
/// </para>
/// <para>
/// <see cref="RedisSentinel"/> builds on this: it starts the servers here, then three Sentinels monitoring
/// <see cref="Primary"/>; <see cref="RedisServer.KillAsync"/> of the primary stands for its crash (SIGKILL).
/// </para>
/// </remarks>
public sealed class RedisReplication : IAsyncDisposable
{
    private static readonly TimeSpan LinkTimeout = TimeSpan.FromSeconds(30);

    private RedisReplication(RedisServer primary, IReadOnlyList<RedisServer> replicas)
    {
        Primary = primary;
        Replicas = replicas;
    }

    /// <summary>Gets the primary: clients write here.</summary>
    public RedisServer Primary { get; }

    /// <summary>Gets the replicas, each replicating <see cref="Primary"/>.</summary>
    public IReadOnlyList<RedisServer> Replicas { get; }

    /// <summary>Gets the first replica (most tests have one).</summary>
    public RedisServer Replica => Replicas[0];

    /// <summary>Starts a primary and <paramref name="replicas"/> replicas, and waits until each replica's link is up.</summary>
    /// <param name="replicas">How many replicas (at least one).</param>
    /// <param name="primaryArguments">redis-server arguments of the primary, after the defaults.</param>
    /// <param name="replicaArguments">redis-server arguments of each replica, after the defaults and <c>--replicaof</c>.</param>
    public static async Task<RedisReplication> StartAsync(int replicas = 1, string[]? primaryArguments = null, string[]? replicaArguments = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(replicas, 1);
        var primary = await RedisServer.StartAsync(primaryArguments ?? []);
        var started = new List<RedisServer>(replicas);
        var replication = new RedisReplication(primary, started);
        try
        {
            for (int i = 0; i < replicas; i++)
            {
                started.Add(await RedisServer.StartAsync(["--replicaof", "127.0.0.1", primary.Port.ToString(), .. replicaArguments ?? []]));
            }

            await replication.WaitForLinksAsync();
            return replication;
        }
        catch
        {
            await replication.DisposeAsync();
            throw;
        }
    }

    /// <summary>
    /// Waits until every replica reports <c>master_link_status:up</c> and the primary reports as many replicas, each
    /// <c>state=online</c>: after a start, or after a replica was thawed and resynchronised.
    /// </summary>
    public async Task WaitForLinksAsync()
    {
        var deadline = DateTime.UtcNow + LinkTimeout;
        while (!await LinksUpAsync())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new InvalidOperationException(
                    $"The replicas of redis-server on port {Primary.Port} did not report their link up within {LinkTimeout.TotalSeconds} s " +
                    $"(primary: connected_slaves={await Primary.InfoFieldAsync("replication", "connected_slaves")}).");
            }

            await Task.Delay(20);
        }
    }

    /// <summary>Kills the replicas, then the primary.</summary>
    public async ValueTask DisposeAsync()
    {
        foreach (var replica in Replicas)
        {
            await replica.DisposeAsync();
        }

        await Primary.DisposeAsync();
    }

    private async Task<bool> LinksUpAsync()
    {
        foreach (var replica in Replicas)
        {
            if (await replica.InfoFieldAsync("replication", "master_link_status") != "up")
            {
                return false;
            }
        }

        int online = 0;
        for (int i = 0; i < Replicas.Count; i++)
        {
            // slave0:ip=127.0.0.1,port=...,state=online,offset=...,lag=0
            if ((await Primary.InfoFieldAsync("replication", $"slave{i}"))?.Contains("state=online", StringComparison.Ordinal) == true)
            {
                online++;
            }
        }

        return online == Replicas.Count;
    }
}

/// <summary>A primary redis-server with one replica, shared by a test class (<see cref="RedisReplication"/>).</summary>
public sealed class RedisReplicationFixture : IAsyncLifetime
{
    /// <summary>Gets the primary and its replica.</summary>
    public RedisReplication Replication { get; private set; } = null!;

    public async ValueTask InitializeAsync() => Replication = await RedisReplication.StartAsync();

    public async ValueTask DisposeAsync() => await Replication.DisposeAsync();
}
