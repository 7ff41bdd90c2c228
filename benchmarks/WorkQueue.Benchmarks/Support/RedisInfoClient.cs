using System.Net;
using System.Net.Sockets;
using System.Text;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// A plain RESP connection that only sends <c>INFO</c>: the counters are read without a client library, so the reading
/// adds no traffic of its own (no heartbeats, no handshake during a window) beyond the <c>INFO</c> calls it leaves out.
/// </summary>
public sealed class RedisInfoClient : IDisposable
{
    private readonly TcpClient _client;
    private readonly NetworkStream _stream;
    private readonly byte[] _buffer = new byte[64 * 1024];

    private RedisInfoClient(TcpClient client)
    {
        _client = client;
        _stream = client.GetStream();
    }

    /// <summary>Connects to a redis-server on the loopback interface.</summary>
    /// <param name="port">Its port.</param>
    /// <returns>The client.</returns>
    public static RedisInfoClient Connect(int port)
    {
        var client = new TcpClient { NoDelay = true };
        client.Connect(IPAddress.Loopback, port);
        return new RedisInfoClient(client);
    }

    /// <summary>Reads the command statistics and the CPU time.</summary>
    /// <returns>The counters.</returns>
    public RedisCounters Read() => RedisCounters.Parse(Info("commandstats") + "\n" + Info("cpu"));

    /// <summary>Reads one section of <c>INFO</c> (<c>replication</c>, say) as Redis writes it.</summary>
    /// <param name="section">The section.</param>
    /// <returns>Its text, one <c>field:value</c> a line.</returns>
    public string ReadSection(string section) => Info(section);

    /// <inheritdoc/>
    public void Dispose() => _client.Dispose();

    private string Info(string section)
    {
        _stream.Write(Encoding.ASCII.GetBytes($"INFO {section}\r\n"));

        // A bulk string: "$<length>\r\n<payload>\r\n".
        int read = 0;
        int headerEnd;
        while ((headerEnd = Array.IndexOf(_buffer, (byte)'\n', 0, read)) < 0)
        {
            read += ReadSome(read);
        }

        if (_buffer[0] != (byte)'$')
        {
            throw new InvalidOperationException($"INFO {section}: unexpected reply '{Encoding.ASCII.GetString(_buffer, 0, read).Trim()}'.");
        }

        int length = int.Parse(Encoding.ASCII.GetString(_buffer, 1, headerEnd - 2), System.Globalization.CultureInfo.InvariantCulture);
        int total = headerEnd + 1 + length + 2;
        while (read < total)
        {
            read += ReadSome(read);
        }

        return Encoding.ASCII.GetString(_buffer, headerEnd + 1, length);
    }

    private int ReadSome(int offset)
    {
        int n = _stream.Read(_buffer, offset, _buffer.Length - offset);
        return n > 0 ? n : throw new IOException("redis-server closed the connection.");
    }
}
