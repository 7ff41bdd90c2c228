using System.Diagnostics;
using System.Text;

namespace WorkQueue.Packaging.Tests.TestSupport;

/// <summary>Runs the <c>dotnet</c> CLI in a child process, isolated from the test host's build environment.</summary>
internal static class DotNetCli
{
    /// <summary>
    /// Runs <c>dotnet</c> with <paramref name="arguments"/> to completion, or kills its process tree after
    /// <paramref name="timeout"/>.
    /// </summary>
    public static async Task<CommandResult> RunAsync(
        string workingDirectory,
        IReadOnlyList<string> arguments,
        TimeSpan timeout,
        IReadOnlyDictionary<string, string>? environment = null)
    {
        using var process = Start(workingDirectory, arguments, environment);

        // Build servers would keep the output streams open after the exit, which is why every build command runs with
        // --disable-build-servers.
        return await process.WaitAsync(timeout);
    }

    /// <summary>Starts <c>dotnet</c> with <paramref name="arguments"/> and captures its output as it comes.</summary>
    public static RunningProcess Start(
        string workingDirectory,
        IReadOnlyList<string> arguments,
        IReadOnlyDictionary<string, string>? environment = null)
    {
        var startInfo = new ProcessStartInfo(DotNetPath())
        {
            WorkingDirectory = workingDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
            StandardOutputEncoding = Encoding.UTF8,
            StandardErrorEncoding = Encoding.UTF8,
        };
        foreach (var argument in arguments)
        {
            startInfo.ArgumentList.Add(argument);
        }

        // `dotnet test` runs the tests with its own MSBuild variables set; a child build must not inherit them.
        foreach (var key in startInfo.Environment.Keys.Where(k => k.StartsWith("MSBuild", StringComparison.OrdinalIgnoreCase)).ToList())
        {
            startInfo.Environment.Remove(key);
        }

        startInfo.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        startInfo.Environment["DOTNET_NOLOGO"] = "1";
        startInfo.Environment["DOTNET_SKIP_FIRST_TIME_EXPERIENCE"] = "1";
        startInfo.Environment["DOTNET_CLI_UI_LANGUAGE"] = "en";
        startInfo.Environment["DOTNET_CLI_USE_MSBUILD_SERVER"] = "0";
        startInfo.Environment["MSBUILDDISABLENODEREUSE"] = "1";
        foreach (var (key, value) in environment ?? new Dictionary<string, string>())
        {
            startInfo.Environment[key] = value;
        }

        return new RunningProcess(startInfo);
    }

    private static string DotNetPath()
    {
        // Set by the dotnet host for its children: the same dotnet that runs the tests.
        string? hostPath = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH");
        return !string.IsNullOrEmpty(hostPath) && File.Exists(hostPath) ? hostPath : "dotnet";
    }
}
