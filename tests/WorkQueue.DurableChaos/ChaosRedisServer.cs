using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace WorkQueue.DurableChaos;

/// <summary>
/// The run's own <c>redis-server</c>: loopback only, append-only file in the run's directory (RDB snapshots off), so that
/// a restart on the same port and directory replays everything it acknowledged (with <c>appendfsync always</c>).
/// </summary>
internal sealed class ChaosRedisServer : IDisposable
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(60);

    private readonly string _directory;
    private readonly string[] _arguments;
    private Process? _process;

    /// <param name="port">The loopback port.</param>
    /// <param name="directory">Its working directory (append-only file, log).</param>
    /// <param name="fsync">Its <c>appendfsync</c>.</param>
    /// <param name="extraArguments">More redis-server arguments after the defaults (<c>--replicaof</c> for a replica).</param>
    public ChaosRedisServer(int port, string directory, string fsync, params string[] extraArguments)
    {
        Port = port;
        _directory = directory;
        _arguments = [
            "--port", port.ToString(CultureInfo.InvariantCulture), "--bind", "127.0.0.1", "--dir", directory,
            "--appendonly", "yes", "--appendfsync", fsync, "--save", "", "--logfile", Path.Combine(directory, "redis.log"), .. extraArguments];
    }

    private ChaosRedisServer(int port, string directory, string[] arguments)
    {
        Port = port;
        _directory = directory;
        _arguments = arguments;
    }

    /// <summary>A Sentinel: <c>redis-server {configFile} --sentinel</c> (the file gives the port; Sentinel rewrites it).</summary>
    public static ChaosRedisServer Sentinel(int port, string directory, string configFile) =>
        new(port, directory, [configFile, "--sentinel"]);

    public int Port { get; }

    public string Configuration => string.Create(CultureInfo.InvariantCulture, $"127.0.0.1:{Port}");

    public static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    /// <summary>Starts redis-server and returns once it answers PING (after replaying its append-only file).</summary>
    public async Task StartAsync()
    {
        var start = new ProcessStartInfo("redis-server")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string arg in _arguments)
        {
            start.ArgumentList.Add(arg);
        }

        _process = Process.Start(start) ?? throw new InvalidOperationException("redis-server did not start.");
        _process.OutputDataReceived += (_, _) => { };
        _process.ErrorDataReceived += (_, _) => { };
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
        var deadline = Stopwatch.StartNew();
        while (!await AnswersPingAsync())
        {
            if (_process.HasExited || deadline.Elapsed > StartTimeout)
            {
                throw new InvalidOperationException(
                    $"redis-server on port {Port} did not answer PING (exited: {_process.HasExited}); see {Path.Combine(_directory, "redis.log")}.");
            }

            await Task.Delay(20);
        }
    }

    /// <summary>Kills redis-server with SIGKILL: no shutdown, no final write; only what the append-only file has survives.</summary>
    public async Task KillAsync()
    {
        if (_process is { HasExited: false })
        {
            _process.Kill();
            await _process.WaitForExitAsync();
        }

        _process?.Dispose();
        _process = null;
    }

    public void Dispose()
    {
        if (_process is { HasExited: false })
        {
            _process.Kill();
            _process.WaitForExit();
        }

        _process?.Dispose();
    }

    private async Task<bool> AnswersPingAsync()
    {
        try
        {
            using var client = new TcpClient();
            await client.ConnectAsync(IPAddress.Loopback, Port);
            var stream = client.GetStream();
            await stream.WriteAsync(Encoding.ASCII.GetBytes("PING\r\n"));
            var buffer = new byte[64];
            int read = await stream.ReadAsync(buffer);

            // While it loads the append-only file it answers -LOADING.
            return Encoding.ASCII.GetString(buffer, 0, read).StartsWith("+PONG", StringComparison.Ordinal);
        }
        catch (Exception ex) when (ex is SocketException or IOException)
        {
            return false;
        }
    }
}
