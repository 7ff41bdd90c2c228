using System.Globalization;

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

    public static Task<DurableChaosProcess> RunAsync(params string[] arguments) => RunCommandAsync("controller", arguments);

    /// <summary>Runs the recurring-job proof (<c>recurring --seconds N ...</c>).</summary>
    public static Task<DurableChaosProcess> RunRecurringAsync(params string[] arguments) => RunCommandAsync("recurring", arguments);

    private static async Task<DurableChaosProcess> RunCommandAsync(string command, string[] arguments)
    {
        var (exitCode, output) = await ChildProcess.RunAsync("DurableChaosPath", "The chaos controller", ExitTimeout, [command, .. arguments]);
        var figures = ChildProcess.Figures(output, "chaos").GroupBy(f => f.Key).ToDictionary(g => g.Key, g => g.Last().Value);
        return new DurableChaosProcess(exitCode, output, figures);
    }

    /// <summary>Gets a figure, failing the test with the controller's whole output when it did not report it.</summary>
    public string this[string key] =>
        Figures.TryGetValue(key, out var value) ? value : throw new Xunit.Sdk.XunitException($"The chaos controller did not report '{key}'. Its output:\n{Output}");

    public long Number(string key) =>
        long.TryParse(this[key], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long value)
            ? value
            : throw new Xunit.Sdk.XunitException($"The chaos controller's '{key}' is not a number: '{this[key]}'. Its output:\n{Output}");
}
