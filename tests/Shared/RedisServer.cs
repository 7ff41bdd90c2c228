using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace WorkQueue.Tests.Support;

/// <summary>A real <c>redis-server</c> on a free loopback port, started for the tests and killed afterwards.</summary>
/// <remarks>
/// Started without persistence (no RDB, no AOF) unless <c>arguments</c> say otherwise; later arguments override earlier
/// ones, as on redis-server's command line (<see cref="RedisReplication"/> adds <c>--replicaof</c>). Its process can be
/// frozen and thawed (<see cref="Pause"/>, <see cref="Resume"/>: SIGSTOP and SIGCONT) to stand for a server that hangs,
/// and <see cref="CommandAsync"/> talks to it without a client library, so every test project can use it. The same class
/// runs a Sentinel (<see cref="StartSentinelAsync"/>).
/// </remarks>
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

    /// <summary>Gets the redis-server's process id.</summary>
    public int ProcessId => _process.Id;

    public static Task<RedisServer> StartAsync(int? port = null) => StartAsync([], port);

    /// <summary>
    /// Starts a server with more <paramref name="arguments"/> after the defaults (<c>--appendonly yes --dir /tmp/x</c>;
    /// a later directive overrides an earlier one). It must still answer a plain PING on <see cref="Port"/>.
    /// </summary>
    public static async Task<RedisServer> StartAsync(IEnumerable<string> arguments, int? port = null)
    {
        int chosen = port ?? FreePort();
        return await LaunchAsync(["--port", chosen.ToString(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", .. arguments], chosen);
    }

    /// <summary>
    /// Starts a Sentinel: <c>redis-server {configFile} --sentinel</c> (what Debian's <c>redis-sentinel</c> runs, so the
    /// redis-server package is enough). The file must be writable, as Sentinel rewrites it, and must give <c>port</c>
    /// <paramref name="port"/>; see <see cref="RedisSentinel"/>.
    /// </summary>
    public static Task<RedisServer> StartSentinelAsync(string configFile, int port) => LaunchAsync([configFile, "--sentinel"], port);

    private static async Task<RedisServer> LaunchAsync(string[] arguments, int chosen)
    {
        var start = new ProcessStartInfo("redis-server", arguments)
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

    /// <summary>
    /// Freezes the server's process (SIGSTOP): it answers nothing, to clients or to its primary or replicas, and its
    /// sockets stay open, as a hung server's do. <see cref="Resume"/> thaws it; disposing kills it either way.
    /// </summary>
    public void Pause() => Signal("-STOP");

    /// <summary>Thaws a server frozen by <see cref="Pause"/> (SIGCONT): it goes on where it stopped.</summary>
    public void Resume() => Signal("-CONT");

    /// <summary>
    /// Sends one command and returns its reply as text: a status or bulk string, an integer, or <see langword="null"/> for
    /// a nil; an error reply throws <see cref="InvalidOperationException"/> with Redis's message. Arrays are not read.
    /// </summary>
    public async Task<string?> CommandAsync(params string[] command)
    {
        using var client = new TcpClient();
        await client.ConnectAsync(IPAddress.Loopback, Port);
        var stream = client.GetStream();
        await WriteCommandAsync(stream, command);
        string header = await ReadLineAsync(stream);
        switch (header[0])
        {
            case '+':
            case ':':
                return header[1..];
            case '-':
                throw new InvalidOperationException($"redis-server on port {Port} answered {string.Join(' ', command)} with: {header[1..]}");
            case '$':
                int length = int.Parse(header[1..], System.Globalization.CultureInfo.InvariantCulture);
                if (length < 0)
                {
                    return null;
                }

                var body = new byte[length + 2];
                await stream.ReadExactlyAsync(body);
                return Encoding.UTF8.GetString(body, 0, length);
            default:
                throw new InvalidOperationException($"redis-server on port {Port} answered {string.Join(' ', command)} with a reply this helper does not read: {header}");
        }
    }

    /// <summary>
    /// Sends one command whose reply is an array of bulk strings (<c>SENTINEL get-master-addr-by-name</c>) and returns
    /// its elements, or <see langword="null"/> for a nil array; an error reply throws as <see cref="CommandAsync"/>.
    /// </summary>
    public async Task<string?[]?> CommandArrayAsync(params string[] command)
    {
        using var client = new TcpClient();
        await client.ConnectAsync(IPAddress.Loopback, Port);
        var stream = client.GetStream();
        await WriteCommandAsync(stream, command);
        string header = await ReadLineAsync(stream);
        if (header[0] == '-')
        {
            throw new InvalidOperationException($"redis-server on port {Port} answered {string.Join(' ', command)} with: {header[1..]}");
        }

        if (header[0] != '*')
        {
            throw new InvalidOperationException($"redis-server on port {Port} answered {string.Join(' ', command)} with a non-array: {header}");
        }

        int count = int.Parse(header[1..], System.Globalization.CultureInfo.InvariantCulture);
        if (count < 0)
        {
            return null;
        }

        var elements = new string?[count];
        for (int i = 0; i < count; i++)
        {
            string element = await ReadLineAsync(stream);
            if (element[0] != '$')
            {
                throw new InvalidOperationException($"redis-server on port {Port} answered {string.Join(' ', command)} with an array element this helper does not read: {element}");
            }

            int length = int.Parse(element[1..], System.Globalization.CultureInfo.InvariantCulture);
            if (length >= 0)
            {
                var body = new byte[length + 2];
                await stream.ReadExactlyAsync(body);
                elements[i] = Encoding.UTF8.GetString(body, 0, length);
            }
        }

        return elements;
    }

    /// <summary>Reads one field of <c>INFO {section}</c> (<c>master_link_status</c>, <c>connected_slaves</c>), or <see langword="null"/> when absent.</summary>
    public async Task<string?> InfoFieldAsync(string section, string field)
    {
        string info = await CommandAsync("INFO", section) ?? string.Empty;
        foreach (string line in info.Split("\r\n"))
        {
            if (line.StartsWith(field + ":", StringComparison.Ordinal))
            {
                return line[(field.Length + 1)..];
            }
        }

        return null;
    }

    /// <summary>
    /// Kills the server's process (SIGKILL) and waits for it to exit: a crash, with no chance to tell its replicas or
    /// clients. Disposing afterwards is still safe.
    /// </summary>
    public async Task KillAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
        }

        await _process.WaitForExitAsync();
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

    private static async Task WriteCommandAsync(NetworkStream stream, string[] command)
    {
        var request = new StringBuilder().Append('*').Append(command.Length).Append("\r\n");
        foreach (string part in command)
        {
            request.Append('$').Append(Encoding.UTF8.GetByteCount(part)).Append("\r\n").Append(part).Append("\r\n");
        }

        await stream.WriteAsync(Encoding.UTF8.GetBytes(request.ToString()));
    }

    private static async Task<string> ReadLineAsync(NetworkStream stream)
    {
        var line = new List<byte>();
        var one = new byte[1];
        while (true)
        {
            await stream.ReadExactlyAsync(one);
            if (one[0] == (byte)'\n' && line.Count > 0 && line[^1] == (byte)'\r')
            {
                return Encoding.UTF8.GetString(line.ToArray(), 0, line.Count - 1);
            }

            line.Add(one[0]);
        }
    }

    private void Signal(string signal)
    {
        using var kill = Process.Start(new ProcessStartInfo("kill", [signal, _process.Id.ToString()]) { UseShellExecute = false })
            ?? throw new InvalidOperationException("kill did not start.");
        kill.WaitForExit();
        if (kill.ExitCode != 0)
        {
            throw new InvalidOperationException($"kill {signal} {_process.Id} exited with {kill.ExitCode}.");
        }
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
