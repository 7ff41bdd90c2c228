using Microsoft.Playwright;

namespace WorkQueue.Dashboard.Tests.TestSupport;

/// <summary>
/// Debian's headless Chromium, driven by Playwright (its .NET package ships the node driver it needs). Playwright's own
/// browser download is never used: the executable path points at the system's Chromium.
/// </summary>
public sealed class Chromium : IAsyncLifetime
{
    /// <summary>Overrides where Chromium is (default <c>/usr/bin/chromium</c>).</summary>
    public const string PathVariable = "WORKQUEUE_CHROMIUM";

    private IPlaywright? _playwright;

    public IBrowser Browser { get; private set; } = null!;

    public static string ExecutablePath => Environment.GetEnvironmentVariable(PathVariable) is { Length: > 0 } path ? path : "/usr/bin/chromium";

    public async ValueTask InitializeAsync()
    {
        // A missing or broken browser fails every test of the class with this message; it never passes quietly.
        if (!File.Exists(ExecutablePath))
        {
            throw new InvalidOperationException(
                $"The browser tests need Chromium at '{ExecutablePath}' and it is not there. Install Debian's package (apt-get install -y chromium; .ci/run does) or set {PathVariable}.");
        }

        try
        {
            _playwright = await Playwright.CreateAsync();
            Browser = await _playwright.Chromium.LaunchAsync(new BrowserTypeLaunchOptions
            {
                ExecutablePath = ExecutablePath,
                Headless = true,
                Timeout = 60_000,
                // Root in a container cannot use Chromium's sandbox.
                Args = ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
            });
        }
        catch (Exception ex) when (ex is PlaywrightException or TimeoutException)
        {
            throw new InvalidOperationException($"Chromium at '{ExecutablePath}' could not be started by Playwright: {ex.Message}", ex);
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (Browser is not null)
        {
            await Browser.DisposeAsync();
        }

        _playwright?.Dispose();
    }
}
