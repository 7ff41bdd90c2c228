using System.Diagnostics;
using System.Reflection;
using System.Text;

namespace WorkQueue.AspNetCore.Tests.TestSupport;

/// <summary>
/// Runs <c>tests/WorkQueue.RedisProbe</c> in a child process (<c>dotnet WorkQueue.RedisProbe.dll scenario port</c>) and
/// collects what it reported: it starves its thread pool and sets a process-wide Redis flag, neither of which may happen
/// inside the test process.
/// </summary>
internal sealed class RedisProbeProcess
{
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromMinutes(3);

    private RedisProbeProcess(int exitCode, string output, Dictionary<string, string> findings)
    {
        ExitCode = exitCode;
        Output = output;
        Findings = findings;
    }

    public int ExitCode { get; }

    /// <summary>Gets everything the child wrote (its findings and its log), for failure messages.</summary>
    public string Output { get; }

    public IReadOnlyDictionary<string, string> Findings { get; }

    public static async Task<RedisProbeProcess> RunAsync(string scenario, int redisPort)
    {
        string probe = typeof(RedisProbeProcess).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
            .Single(a => a.Key == "RedisProbePath").Value!;
        Assert.True(File.Exists(probe), $"The probe was not built at {probe}.");
        var start = new ProcessStartInfo("dotnet", [probe, scenario, redisPort.ToString()])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        using var process = Process.Start(start) ?? throw new InvalidOperationException("dotnet did not start.");
        var output = new StringBuilder();
        var stdout = PumpAsync(process.StandardOutput, output);
        var stderr = PumpAsync(process.StandardError, output);
        using var timeout = new CancellationTokenSource(ExitTimeout);
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException) when (timeout.IsCancellationRequested)
        {
            process.Kill(entireProcessTree: true);
            Assert.Fail($"The probe ({scenario}) did not exit within {ExitTimeout.TotalMinutes} min. Output so far:\n{Snapshot(output)}");
        }

        await Task.WhenAll(stdout, stderr);
        string text = Snapshot(output);
        var findings = text.Split('\n')
            .Select(line => line.TrimEnd('\r'))
            .Where(line => line.StartsWith("probe.", StringComparison.Ordinal) && line.Contains('='))
            .Select(line => line["probe.".Length..].Split('=', 2))
            .ToDictionary(pair => pair[0], pair => pair[1]);
        return new RedisProbeProcess(process.ExitCode, text, findings);
    }

    /// <summary>Gets a finding, failing the test with the child's whole output when it did not report it.</summary>
    public string this[string key] =>
        Findings.TryGetValue(key, out var value) ? value : throw new Xunit.Sdk.XunitException($"The probe did not report '{key}'. Its output:\n{Output}");

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
