using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// A <c>redis-server</c> of the benchmark's own on a free loopback port, with the append-only file on and the
/// <c>appendfsync</c> policy the benchmark asks for; killed, and its files deleted, on <see cref="Dispose"/>.
/// </summary>
/// <remarks>
/// RDB snapshots are off (<c>--save ""</c>): the AOF is the persistence under test. The AOF lives in a new folder under
/// <see cref="Path.GetTempPath"/>, or under <see cref="DirectoryVariable"/> when set: it must be a real disk, since on a
/// tmpfs an fsync costs nothing and <c>always</c> would measure nothing. Every other setting is redis-server's default
/// (automatic AOF rewrites included), as in production. <see cref="StartReplica"/> starts a replica of it, with the
/// same persistence, for the rows that measure replica acknowledgements.
/// </remarks>
public sealed class RedisServerProcess : IDisposable
{
    /// <summary>The environment variable naming the folder under which the AOF files are written.</summary>
    public const string DirectoryVariable = "WORKQUEUE_BENCH_REDIS_DIR";

    private readonly Process _process;
    private readonly string _directory;
    private readonly RedisInfoClient _info;
    private int _disposed;

    private RedisServerProcess(Process process, int port, string directory, string appendFsync)
    {
        _process = process;
        _directory = directory;
        Port = port;
        AppendFsync = appendFsync;
        _info = RedisInfoClient.Connect(port);

        // BenchmarkDotNet skips [GlobalCleanup] when a [GlobalSetup] fails: the server must not outlive the process.
        AppDomain.CurrentDomain.ProcessExit += (_, _) => Dispose();
    }

    /// <summary>Gets the port it listens on (loopback only).</summary>
    public int Port { get; }

    /// <summary>Gets its <c>appendfsync</c> policy.</summary>
    public string AppendFsync { get; }

    /// <summary>Gets the StackExchange.Redis configuration string that reaches it.</summary>
    public string Configuration => $"127.0.0.1:{Port}";

    /// <summary>Starts a redis-server with the AOF on and <paramref name="appendFsync"/> as its fsync policy.</summary>
    /// <param name="appendFsync"><c>everysec</c>, <c>always</c> or <c>no</c>.</param>
    /// <returns>The server, answering commands.</returns>
    public static RedisServerProcess Start(string appendFsync) => Start(appendFsync, replicaOf: null);

    /// <summary>
    /// Starts a replica of this server (<c>--replicaof</c>), with the AOF on and the same <c>appendfsync</c> policy, and
    /// returns once its link is up and this server counts it online. Dispose it before this one.
    /// </summary>
    /// <returns>The replica, replicating.</returns>
    public RedisServerProcess StartReplica()
    {
        var replica = Start(AppendFsync, replicaOf: Port);
        var deadline = Stopwatch.GetTimestamp() + (30 * Stopwatch.Frequency);
        while (!replica._info.ReadSection("replication").Contains("master_link_status:up", StringComparison.Ordinal)
            || !_info.ReadSection("replication").Contains("state=online", StringComparison.Ordinal))
        {
            if (Stopwatch.GetTimestamp() > deadline)
            {
                replica.Dispose();
                throw new InvalidOperationException($"The replica on port {replica.Port} of redis-server on port {Port} did not report its link up within 30 s.");
            }

            Thread.Sleep(20);
        }

        return replica;
    }

    private static RedisServerProcess Start(string appendFsync, int? replicaOf)
    {
        int port = FreePort();
        string root = Environment.GetEnvironmentVariable(DirectoryVariable) is { Length: > 0 } configured ? configured : Path.GetTempPath();
        string directory = Path.Combine(root, $"workqueue-bench-redis-{Environment.ProcessId}-{port}");
        Directory.CreateDirectory(directory);
        string[] replication = replicaOf is { } primary ? ["--replicaof", "127.0.0.1", primary.ToString(CultureInfo.InvariantCulture)] : [];
        var start = new ProcessStartInfo(
            "redis-server",
            ["--port", port.ToString(CultureInfo.InvariantCulture), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--appendfsync", appendFsync, "--dir", directory, .. replication])
        {
            RedirectStandardOutput = true,
            UseShellExecute = false,
        };
        var process = Process.Start(start) ?? throw new InvalidOperationException("redis-server did not start.");
        process.OutputDataReceived += (_, _) => { };
        process.BeginOutputReadLine();
        var deadline = Stopwatch.GetTimestamp() + (20 * Stopwatch.Frequency);
        while (true)
        {
            try
            {
                return new RedisServerProcess(process, port, directory, appendFsync);
            }
            catch (SocketException) when (!process.HasExited && Stopwatch.GetTimestamp() < deadline)
            {
                Thread.Sleep(20);
            }
            catch (SocketException)
            {
                if (!process.HasExited)
                {
                    process.Kill();
                }

                throw new InvalidOperationException($"redis-server on port {port} did not accept connections within 20 s.");
            }
        }
    }

    /// <summary>Reads the server's counters (<c>INFO commandstats</c> and <c>INFO cpu</c>).</summary>
    /// <returns>The counters now.</returns>
    public RedisCounters ReadCounters() => _info.Read();

    /// <summary>Kills the server and deletes its files.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _info.Dispose();
        if (!_process.HasExited)
        {
            _process.Kill();
            _process.WaitForExit();
        }

        _process.Dispose();
        try
        {
            Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
            // Left in the temp folder; it holds nothing of value.
        }
    }

    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
