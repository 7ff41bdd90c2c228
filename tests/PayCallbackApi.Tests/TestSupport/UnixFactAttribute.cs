using System.Runtime.CompilerServices;

namespace PayCallbackApi.Tests.TestSupport;

/// <summary>A fact that sends POSIX signals (SIGTERM): skipped on Windows, which has none.</summary>
public sealed class UnixFactAttribute : FactAttribute
{
    public UnixFactAttribute([CallerFilePath] string? sourceFilePath = null, [CallerLineNumber] int sourceLineNumber = -1)
        : base(sourceFilePath, sourceLineNumber)
    {
        if (OperatingSystem.IsWindows())
        {
            Skip = "Sends SIGTERM, which Windows does not have.";
        }
    }
}
