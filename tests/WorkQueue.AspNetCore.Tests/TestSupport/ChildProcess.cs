using System.Diagnostics;
using System.Reflection;
using System.Text;

namespace WorkQueue.AspNetCore.Tests.TestSupport;

/// <summary>
/// Runs a console program this test project builds next to it (its path in an <see cref="AssemblyMetadataAttribute"/>)
/// as a child process, collects everything it writes, and reads its <c>prefix.key=value</c> lines: the Redis probe and
/// the chaos controller do what must not happen inside the test process (starving the pool, killing processes).
/// </summary>
internal static class ChildProcess
{
    /// <summary>Runs the program to its end (killing its whole tree and failing the test after <paramref name="timeout"/>).</summary>
    public static async Task<(int ExitCode, string Output)> RunAsync(string pathKey, string what, TimeSpan timeout, IEnumerable<string> arguments)
    {
        string program = typeof(ChildProcess).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
            .Single(a => a.Key == pathKey).Value!;
        Assert.True(File.Exists(program), $"{what} was not built at {program}.");
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(program);
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using var process = Process.Start(start) ?? throw new InvalidOperationException("dotnet did not start.");
        var output = new StringBuilder();
        var stdout = PumpAsync(process.StandardOutput, output);
        var stderr = PumpAsync(process.StandardError, output);
        using var cts = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(cts.Token);
        }
        catch (OperationCanceledException) when (cts.IsCancellationRequested)
        {
            // The whole tree: a controller's workers and redis-server too.
            process.Kill(entireProcessTree: true);
            Assert.Fail($"{what} did not exit within {timeout.TotalMinutes} min. Output so far:\n{Snapshot(output)}");
        }

        await Task.WhenAll(stdout, stderr);
        return (process.ExitCode, Snapshot(output));
    }

    /// <summary>Reads the <c>{prefix}.key=value</c> lines of a program's output, as (key, value) in the order written.</summary>
    public static IEnumerable<(string Key, string Value)> Figures(string output, string prefix) =>
        output.Split('\n')
            .Select(line => line.TrimEnd('\r'))
            .Where(line => line.StartsWith(prefix + ".", StringComparison.Ordinal) && line.Contains('='))
            .Select(line => line[(prefix.Length + 1)..].Split('=', 2))
            .Select(pair => (pair[0], pair[1]));

    private static async Task PumpAsync(StreamReader reader, StringBuilder output)
    {
        while (await reader.ReadLineAsync() is { } line)
        {
            lock (output)
            {
                output.AppendLine(line);
            }
        }
    }

    private static string Snapshot(StringBuilder output)
    {
        lock (output)
        {
            return output.ToString();
        }
    }
}
