using System.Text.Json;
using Microsoft.Playwright;
using static Microsoft.Playwright.Assertions;

namespace WorkQueue.Dashboard.Tests.TestSupport;

/// <summary>Opens the dashboard in a new browser context and finds its parts the way a user reads them.</summary>
internal static class DashboardPage
{
    public static readonly float Generous = (float)Wait.Generous.TotalMilliseconds;

    /// <summary>Opens the page in a new context (closed by the caller) and, unless told not to, waits for every queue's card.</summary>
    public static async Task<IPage> OpenAsync(IBrowser browser, List<IBrowserContext> contexts, DashboardHost host, Action<string> log, bool waitForQueues = true, int width = 1366, int height = 900)
    {
        var context = await browser.NewContextAsync(new() { ViewportSize = new() { Width = width, Height = height } });
        contexts.Add(context);
        var page = await context.NewPageAsync();
        page.Console += (_, message) => log($"console.{message.Type}: {message.Text}");
        page.PageError += (_, error) => log($"page error: {error}");
        var response = await page.GotoAsync(host.PageUri.ToString());
        Assert.NotNull(response);
        Assert.Equal(200, response.Status);
        if (waitForQueues)
        {
            try
            {
                await Expect(page.Locator("section.queue")).ToHaveCountAsync(host.QueueCount, new() { Timeout = Generous });
            }
            catch (PlaywrightException ex)
            {
                // What the page itself says is the first thing to know.
                throw new InvalidOperationException(
                    $"The page did not show {host.QueueCount} queues. Status: '{await page.Locator("#status").TextContentAsync()}'; error: '{await page.Locator("#error").TextContentAsync()}'.", ex);
            }
        }

        return page;
    }

    /// <summary>The card of the queue with exactly this name.</summary>
    public static ILocator Card(IPage page, string queue) =>
        page.Locator("section.queue").Filter(new() { Has = page.GetByRole(AriaRole.Heading, new() { Name = queue, Exact = true }) });

    /// <summary>The value shown under a field's label in a card (every field list of the card).</summary>
    public static ILocator Field(ILocator card, string label) =>
        card.Locator("dl.fields > div").Filter(new() { Has = card.Page.GetByText(label, new() { Exact = true }) }).Locator("dd");

    /// <summary>Runs axe-core on the page and returns its violations as "impact: id (help) at nodes".</summary>
    public static async Task<string[]> AxeViolationsAsync(IPage page)
    {
        // axe-core is evaluated through the browser's debugging protocol, which the page's CSP does not govern.
        await page.EvaluateAsync(await File.ReadAllTextAsync(Path.Combine(AppContext.BaseDirectory, "Assets", "axe-core", "axe.min.js")));
        var violations = await page.EvaluateAsync<JsonElement>(
            """
            async () => {
              const result = await axe.run(document, { resultTypes: ['violations'] });
              return result.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' ')) }));
            }
            """);
        return [.. violations.EnumerateArray().Select(v => $"{v.GetProperty("impact")}: {v.GetProperty("id")} ({v.GetProperty("help")}) at {v.GetProperty("nodes")}")];
    }

    public static bool IsSeriousOrCritical(string violation) =>
        violation.StartsWith("serious", StringComparison.Ordinal) || violation.StartsWith("critical", StringComparison.Ordinal);

    /// <summary>Saves a full-page screenshot under the test output's <c>screenshots/</c> and returns its path.</summary>
    public static async Task<string> SaveScreenshotAsync(IPage page, string name)
    {
        string path = Path.Combine(AppContext.BaseDirectory, "screenshots", name);
        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        await page.ScreenshotAsync(new() { Path = path, FullPage = true });
        return path;
    }
}
