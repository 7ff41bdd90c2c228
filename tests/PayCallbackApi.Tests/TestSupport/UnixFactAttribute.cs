namespace PayCallbackApi.Tests.TestSupport;

/// <summary>A fact that sends POSIX signals (SIGTERM): skipped on Windows, which has none.</summary>
public sealed class UnixFactAttribute : FactAttribute
{
    public UnixFactAttribute()
    {
        if (OperatingSystem.IsWindows())
        {
            Skip = "Sends SIGTERM, which Windows does not have.";
        }
    }
}
