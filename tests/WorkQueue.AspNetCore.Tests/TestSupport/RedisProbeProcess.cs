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
        var (exitCode, output) = await ChildProcess.RunAsync("RedisProbePath", $"The probe ({scenario})", ExitTimeout, [scenario, redisPort.ToString()]);
        var findings = ChildProcess.Figures(output, "probe").ToDictionary(f => f.Key, f => f.Value);
        return new RedisProbeProcess(exitCode, output, findings);
    }

    /// <summary>Gets a finding, failing the test with the child's whole output when it did not report it.</summary>
    public string this[string key] =>
        Findings.TryGetValue(key, out var value) ? value : throw new Xunit.Sdk.XunitException($"The probe did not report '{key}'. Its output:\n{Output}");
}
