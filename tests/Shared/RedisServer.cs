using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace WorkQueue.Testing;

/// <summary>A real <c>redis-server</c> on a free loopback port, started for the tests and killed afterwards.</summary>
public sealed class RedisServer : IAsyncDisposable
{
    private readonly Process _process;

    private RedisServer(Process process, int port)
    {
        _process = process;
        Port = port;
    }

    public int Port { get; }

    public string Configuration => $"127.0.0.1:{Port}";

    public static Task<RedisServer> StartAsync(int? port = null) => StartAsync([], port);

    /// <summary>
    /// Starts a server with more <paramref name="arguments"/> after the defaults (<c>--appendonly yes --dir /tmp/x</c>;
    /// a later directive overrides an earlier one). It must still answer a plain PING on <see cref="Port"/>.
    /// </summary>
    public static async Task<RedisServer> StartAsync(IEnumerable<string> arguments, int? port = null)
    {
        int chosen = port ?? FreePort();
        var start = new ProcessStartInfo("redis-server", ["--port", chosen.ToString(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", .. arguments])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        Process process;
        try
        {
            process = Process.Start(start) ?? throw new InvalidOperationException("redis-server did not start.");
        }
        catch (System.ComponentModel.Win32Exception ex)
        {
            throw new InvalidOperationException("These tests need a real redis-server on PATH (apt-get install -y redis-server; .ci/run installs it).", ex);
        }

        process.OutputDataReceived += (_, _) => { };
        process.ErrorDataReceived += (_, _) => { };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        var server = new RedisServer(process, chosen);
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        while (!await server.AnswersPingAsync())
        {
            if (process.HasExited || DateTime.UtcNow > deadline)
            {
                await server.DisposeAsync();
                throw new InvalidOperationException($"redis-server on port {chosen} did not answer PING.");
            }

            await Task.Delay(20);
        }

        return server;
    }

    public static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            await _process.WaitForExitAsync();
        }

        _process.Dispose();
    }

    private async Task<bool> AnswersPingAsync()
    {
        try
        {
            using var client = new TcpClient();
            await client.ConnectAsync(IPAddress.Loopback, Port);
            var stream = client.GetStream();
            await stream.WriteAsync(Encoding.ASCII.GetBytes("PING\r\n"));
            var buffer = new byte[16];
            int read = await stream.ReadAsync(buffer);
            return Encoding.ASCII.GetString(buffer, 0, read).StartsWith("+PONG", StringComparison.Ordinal);
        }
        catch (SocketException)
        {
            return false;
        }
    }
}

/// <summary>One redis-server shared by a test class.</summary>
public sealed class RedisServerFixture : IAsyncLifetime
{
    public RedisServer Server { get; private set; } = null!;

    public async ValueTask InitializeAsync() => Server = await RedisServer.StartAsync();

    public async ValueTask DisposeAsync() => await Server.DisposeAsync();
}
