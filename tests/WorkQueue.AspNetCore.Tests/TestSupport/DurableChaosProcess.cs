using System.Diagnostics;
using System.Globalization;
using System.Reflection;
using System.Text;

namespace WorkQueue.AspNetCore.Tests.TestSupport;

/// <summary>
/// Runs <c>tests/WorkQueue.DurableChaos</c>'s controller in a child process (<c>dotnet WorkQueue.DurableChaos.dll
/// controller ...</c>), which starts its own redis-server and worker processes, and collects the <c>chaos.key=value</c>
/// figures it reported.
/// </summary>
internal sealed class DurableChaosProcess
{
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromMinutes(4);

    private DurableChaosProcess(int exitCode, string output, Dictionary<string, string> figures)
    {
        ExitCode = exitCode;
        Output = output;
        Figures = figures;
    }

    public int ExitCode { get; }

    /// <summary>Gets everything the controller wrote (its figures, its progress and its summary), for failure messages.</summary>
    public string Output { get; }

    public IReadOnlyDictionary<string, string> Figures { get; }

    public static async Task<DurableChaosProcess> RunAsync(params string[] arguments)
    {
        string controller = typeof(DurableChaosProcess).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
            .Single(a => a.Key == "DurableChaosPath").Value!;
        Assert.True(File.Exists(controller), $"The chaos controller was not built at {controller}.");
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(controller);
        start.ArgumentList.Add("controller");
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

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
            // The whole tree: the controller's workers and redis-server too.
            process.Kill(entireProcessTree: true);
            Assert.Fail($"The chaos controller did not exit within {ExitTimeout.TotalMinutes} min. Output so far:\n{Snapshot(output)}");
        }

        await Task.WhenAll(stdout, stderr);
        string text = Snapshot(output);
        var figures = text.Split('\n')
            .Select(line => line.TrimEnd('\r'))
            .Where(line => line.StartsWith("chaos.", StringComparison.Ordinal) && line.Contains('='))
            .Select(line => line["chaos.".Length..].Split('=', 2))
            .GroupBy(pair => pair[0])
            .ToDictionary(g => g.Key, g => g.Last()[1]);
        return new DurableChaosProcess(process.ExitCode, text, figures);
    }

    /// <summary>Gets a figure, failing the test with the controller's whole output when it did not report it.</summary>
    public string this[string key] =>
        Figures.TryGetValue(key, out var value) ? value : throw new Xunit.Sdk.XunitException($"The chaos controller did not report '{key}'. Its output:\n{Output}");

    public long Number(string key) =>
        long.TryParse(this[key], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long value)
            ? value
            : throw new Xunit.Sdk.XunitException($"The chaos controller's '{key}' is not a number: '{this[key]}'. Its output:\n{Output}");

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
