namespace WorkQueue.Packaging.Tests.TestSupport;

/// <summary>The outcome of one <c>dotnet</c> command: its exit code and everything it printed.</summary>
internal sealed record CommandResult(string CommandLine, int ExitCode, bool TimedOut, TimeSpan Elapsed, string Output)
{
    public bool Succeeded => !TimedOut && ExitCode == 0;

    /// <summary>Describes the command for a failure message, with its whole output.</summary>
    public string Describe() =>
        $"`{CommandLine}` {(TimedOut ? "timed out" : $"exited with {ExitCode}")} after {Elapsed.TotalSeconds:F0} s. Output:{Environment.NewLine}{Output}";

    /// <summary>Fails the test, with the command's output, unless the command succeeded.</summary>
    public CommandResult EnsureSucceeded(string what)
    {
        Assert.True(Succeeded, $"{what} failed: {Describe()}");
        return this;
    }
}
