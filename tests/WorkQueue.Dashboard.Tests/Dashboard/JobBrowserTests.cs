using System.Globalization;
using System.Text.Json;
using System.Text.RegularExpressions;
using Microsoft.Playwright;
using WorkQueue.Dashboard.Tests.TestSupport;
using static Microsoft.Playwright.Assertions;

namespace WorkQueue.Dashboard.Tests.Dashboard;

/// <summary>
/// The dashboard's job browser (<c>GET {prefix}/{queue}/jobs</c>): search by type, error and id, a state filter,
/// paging, a job's details, cancel from there, text escaping and accessibility, in a real headless Chromium against a
/// real Kestrel host.
/// </summary>
public sealed class JobBrowserTests(Chromium chromium, ITestOutputHelper output) : IClassFixture<Chromium>, IAsyncLifetime
{
    private const string Hostile = "<img src=x onerror=\"window.pwned = 1\">";

    private readonly List<IBrowserContext> _contexts = [];

    public ValueTask InitializeAsync() => ValueTask.CompletedTask;

    public async ValueTask DisposeAsync()
    {
        foreach (var context in _contexts)
        {
            await context.CloseAsync();
        }
    }

    [Fact]
    public async Task Search_ByTypeText_ListsOnlyTheMatchingJobs()
    {
        await using var host = await DashboardHost.StartAsync();
        host.Control("default").Pause();
        var alpha = new List<string>();
        var beta = new List<string>();
        for (int i = 0; i < 3; i++)
        {
            alpha.Add((await host.Queue("default").EnqueueAsync(new AlphaHandler(), "a", new JobOptions())).JobId);
            beta.Add((await host.Queue("default").EnqueueAsync(new BetaHandler(), "b", new JobOptions())).JobId);
        }

        var page = await OpenAsync(host);
        var jobs = Jobs(page);
        await jobs.GetByLabel("Job type contains").FillAsync("betahandler");
        await jobs.GetByRole(AriaRole.Button, new() { Name = "Search jobs" }).ClickAsync();

        await Expect(jobs.Locator("#jobs-status")).ToHaveTextAsync("Page 1: 3 jobs of default (6 read).", new() { Timeout = DashboardPage.Generous });
        Assert.Equal(beta.AsEnumerable().Reverse().Select(Text), await RowIdsAsync(jobs));
        await Expect(Rows(jobs).Locator("td:nth-child(2)")).ToContainTextAsync([nameof(BetaHandler), nameof(BetaHandler), nameof(BetaHandler)]);
        await Expect(jobs.Locator("#jobs-results-title")).ToBeFocusedAsync();
    }

    [Fact]
    public async Task Filter_ByStateAndError_ListsOnlyThoseJobs()
    {
        await using var host = await DashboardHost.StartAsync();
        var failed = new List<string>();
        var succeeded = new List<string>();
        for (int i = 0; i < 3; i++)
        {
            failed.Add((await host.Queue("io").EnqueueAsync(new FailingHandler(), i % 2 == 0 ? "card declined" : "gateway timeout", new JobOptions())).JobId);
            succeeded.Add((await host.Queue("io").EnqueueAsync(new AlphaHandler(), "ok", new JobOptions())).JobId);
        }

        await Wait.UntilAsync(() => host.Control("io").GetSnapshot().Totals.Unfinished == 0, "the io jobs to end");
        var page = await OpenAsync(host);
        var jobs = Jobs(page);
        await jobs.GetByLabel("Queue").SelectOptionAsync("io");
        await jobs.GetByLabel("State").SelectOptionAsync(new SelectOptionValue { Label = "Dead-lettered" });
        await jobs.GetByRole(AriaRole.Button, new() { Name = "Search jobs" }).ClickAsync();

        await Expect(jobs.Locator("#jobs-status")).ToHaveTextAsync("Page 1: 3 jobs of io (3 read).", new() { Timeout = DashboardPage.Generous });
        Assert.Equal(failed.Order().Select(Text), (await RowIdsAsync(jobs)).Order());
        await Expect(Rows(jobs).Locator("td.state")).ToHaveTextAsync(["Dead-lettered", "Dead-lettered", "Dead-lettered"]);

        await jobs.GetByLabel("Error contains").FillAsync("TIMEOUT");
        await jobs.GetByRole(AriaRole.Button, new() { Name = "Search jobs" }).ClickAsync();
        await Expect(jobs.Locator("#jobs-status")).ToHaveTextAsync("Page 1: 1 job of io (3 read).", new() { Timeout = DashboardPage.Generous });
        Assert.Equal([Text(failed[1])], await RowIdsAsync(jobs));
        await Expect(Rows(jobs).Locator("td.last-error")).ToHaveTextAsync("gateway timeout");
    }

    [Fact]
    public async Task Paging_MoreThanOnePage_NextAndPreviousWalkTheCursor()
    {
        await using var host = await DashboardHost.StartAsync();
        var ids = Enumerable.Range(0, 45).Select(_ => host.Queue("default").Schedule(_ => { }, TimeSpan.FromHours(1))).Reverse().ToArray();
        var page = await OpenAsync(host);
        var jobs = Jobs(page);
        var next = jobs.GetByRole(AriaRole.Button, new() { Name = "Next page" });
        var previous = jobs.GetByRole(AriaRole.Button, new() { Name = "Previous page" });
        var status = jobs.Locator("#jobs-status");

        await jobs.GetByLabel("State").SelectOptionAsync(new SelectOptionValue { Label = "Scheduled" });
        await jobs.GetByRole(AriaRole.Button, new() { Name = "Search jobs" }).ClickAsync();
        await Expect(status).ToHaveTextAsync("Page 1: 20 jobs of default (20 read). More on the next page.", new() { Timeout = DashboardPage.Generous });
        Assert.Equal(ids[..20], await RowIdsAsync(jobs));
        await Expect(previous).ToBeDisabledAsync();

        await next.ClickAsync();
        await Expect(status).ToContainTextAsync("Page 2: 20 jobs", new() { Timeout = DashboardPage.Generous });
        Assert.Equal(ids[20..40], await RowIdsAsync(jobs));

        await next.ClickAsync();
        await Expect(status).ToContainTextAsync("Page 3: 5 jobs", new() { Timeout = DashboardPage.Generous });
        Assert.Equal(ids[40..], await RowIdsAsync(jobs));
        await Expect(next).ToBeDisabledAsync();

        await previous.ClickAsync();
        await Expect(status).ToContainTextAsync("Page 2: 20 jobs", new() { Timeout = DashboardPage.Generous });
        Assert.Equal(ids[20..40], await RowIdsAsync(jobs));
        await Expect(jobs.Locator("#jobs-page")).ToHaveTextAsync("Page 2");
    }

    [Fact]
    public async Task Details_OpenedFromARow_ShowsEveryFieldAndCancelEndsTheJob()
    {
        await using var host = await DashboardHost.StartAsync();
        string id = host.Queue("default").Schedule(_ => { }, TimeSpan.FromHours(1));
        var page = await OpenAsync(host);
        page.Dialog += (_, dialog) => dialog.AcceptAsync();
        var jobs = Jobs(page);
        await jobs.GetByRole(AriaRole.Button, new() { Name = "Search jobs" }).ClickAsync();

        await jobs.GetByRole(AriaRole.Button, new() { Name = $"Job {id} details" }).ClickAsync();
        var details = jobs.Locator("#job-details");
        await Expect(details.GetByRole(AriaRole.Heading, new() { Name = $"Job {id} of default" })).ToBeFocusedAsync(new() { Timeout = DashboardPage.Generous });
        await Expect(DetailField(details, "Id")).ToHaveTextAsync(Text(id));
        await Expect(DetailField(details, "State")).ToHaveTextAsync("Scheduled");
        await Expect(DetailField(details, "Due at")).ToBeVisibleAsync();
        await Expect(DetailField(details, "Accepted at")).ToBeVisibleAsync();
        await Expect(DetailField(details, "Job")).ToContainTextAsync(nameof(Details_OpenedFromARow_ShowsEveryFieldAndCancelEndsTheJob));
        await Expect(details.Locator("#job-details-payload")).ToContainTextAsync("Hidden by configuration");
        await Expect(jobs.Locator("#jobs-payloads")).ToContainTextAsync("Payloads are hidden by configuration");

        await details.GetByRole(AriaRole.Button, new() { Name = $"Cancel job {id}" }).ClickAsync();
        await Expect(details.Locator("#job-details-status")).ToHaveTextAsync($"Canceled job {id}: it will not run.", new() { Timeout = DashboardPage.Generous });
        await Expect(DetailField(details, "State")).ToHaveTextAsync("Canceled");
        await Expect(Rows(jobs).Filter(new() { HasText = Text(id) }).Locator("td.state")).ToHaveTextAsync("Canceled");
        await Expect(details.GetByRole(AriaRole.Button, new() { Name = $"Cancel job {id}" })).ToBeHiddenAsync();
        Assert.Equal(JobState.Canceled, (await host.Queue("default").GetJobAsync(id))!.State);

        // Closing the details puts the focus back on the job's row.
        await details.GetByRole(AriaRole.Button, new() { Name = "Close details" }).ClickAsync();
        await Expect(details).ToBeHiddenAsync();
        await Expect(jobs.GetByRole(AriaRole.Button, new() { Name = $"Job {id} details" })).ToBeFocusedAsync();
    }

    [Fact]
    public async Task SearchById_WithPayloadsShown_OpensTheDetailsWithThePayload()
    {
        await using var host = await DashboardHost.StartAsync(showPayloads: true);
        var result = await host.Queue("default").EnqueueAsync(new AlphaHandler(), "order 42 for Ada", new JobOptions { Delay = TimeSpan.FromHours(1) });
        var page = await OpenAsync(host);
        var jobs = Jobs(page);

        await jobs.GetByLabel("Job id").FillAsync(Text(result.JobId));
        await jobs.GetByRole(AriaRole.Button, new() { Name = "Search jobs" }).ClickAsync();

        var details = jobs.Locator("#job-details");
        await Expect(details.GetByRole(AriaRole.Heading, new() { Name = $"Job {result.JobId} of default" })).ToBeFocusedAsync(new() { Timeout = DashboardPage.Generous });
        await Expect(details.Locator("#job-details-payload")).ToHaveTextAsync("\"order 42 for Ada\"");
        await Expect(jobs.Locator("#jobs-status")).ToHaveTextAsync($"Job {result.JobId} found: Scheduled.");
        await Expect(jobs.Locator("#jobs-payloads")).ToContainTextAsync("Payloads are shown");
    }

    [Fact]
    public async Task ErrorText_WithMarkup_IsShownAsTextNeverRun()
    {
        await using var host = await DashboardHost.StartAsync();
        string id = (await host.Queue("io").EnqueueAsync(new FailingHandler(), Hostile, new JobOptions())).JobId;
        await Wait.UntilAsync(async () => (await host.Queue("io").GetJobAsync(id))?.State == JobState.DeadLettered, "the job to be dead-lettered");
        var page = await OpenAsync(host);
        var jobs = Jobs(page);

        await jobs.GetByLabel("Queue").SelectOptionAsync("io");
        await jobs.GetByLabel("Error contains").FillAsync("onerror");
        await jobs.GetByRole(AriaRole.Button, new() { Name = "Search jobs" }).ClickAsync();
        await Expect(Rows(jobs).Locator("td.last-error")).ToHaveTextAsync(Hostile, new() { Timeout = DashboardPage.Generous });
        await jobs.GetByRole(AriaRole.Button, new() { Name = $"Job {id} details" }).ClickAsync();
        await Expect(DetailField(jobs.Locator("#job-details"), "Last error")).ToHaveTextAsync(Hostile);

        Assert.Equal(0, await page.Locator("#jobs img, #jobs script").CountAsync());
        await Expect(jobs.GetByLabel("Queue").Locator("option")).ToHaveTextAsync(["default", "io", DashboardHost.HostileQueue]);
        Assert.False(await page.EvaluateAsync<bool>("() => 'pwned' in window"), "The error text ran as markup.");
    }

    [Fact]
    public async Task KeyboardOnly_SearchOpenAndClose_WithNoAxeViolations()
    {
        await using var host = await DashboardHost.StartAsync();
        string failed = (await host.Queue("io").EnqueueAsync(new FailingHandler(), "card declined", new JobOptions())).JobId;
        string scheduled = host.Queue("default").Schedule(_ => { }, TimeSpan.FromHours(1));
        await Wait.UntilAsync(async () => (await host.Queue("io").GetJobAsync(failed))?.State == JobState.DeadLettered, "the job to be dead-lettered");
        var page = await OpenAsync(host);
        var jobs = Jobs(page);

        // Type into the type field, Enter submits; the focus moves to the results, Tab reaches the job's button.
        await jobs.GetByLabel("Job type contains").FocusAsync();
        await page.Keyboard.TypeAsync(nameof(KeyboardOnly_SearchOpenAndClose_WithNoAxeViolations));
        await page.Keyboard.PressAsync("Enter");
        await Expect(jobs.Locator("#jobs-results-title")).ToBeFocusedAsync(new() { Timeout = DashboardPage.Generous });
        await Expect(jobs.Locator("#jobs-status")).ToHaveTextAsync("Page 1: 1 job of default (1 read).");
        await page.Keyboard.PressAsync("Tab");
        await Expect(jobs.GetByRole(AriaRole.Button, new() { Name = $"Job {scheduled} details" })).ToBeFocusedAsync();
        await page.Keyboard.PressAsync("Enter");
        await Expect(jobs.GetByRole(AriaRole.Heading, new() { Name = $"Job {scheduled} of default" })).ToBeFocusedAsync(new() { Timeout = DashboardPage.Generous });

        var violations = await JobsAxeViolationsAsync(page);
        output.WriteLine(violations.Length == 0 ? "axe-core (jobs section, details open): no violations." : string.Join('\n', violations));
        Assert.Empty(violations);

        await jobs.GetByRole(AriaRole.Button, new() { Name = "Close details" }).FocusAsync();
        await page.Keyboard.PressAsync("Enter");
        await Expect(jobs.GetByRole(AriaRole.Button, new() { Name = $"Job {scheduled} details" })).ToBeFocusedAsync();

        // A dead-lettered job with its error, on another queue, and an empty result: still no violations.
        await jobs.GetByLabel("Queue").SelectOptionAsync("io");
        await jobs.GetByLabel("Job type contains").FillAsync(string.Empty);
        await jobs.GetByRole(AriaRole.Button, new() { Name = "Search jobs" }).ClickAsync();
        await Expect(jobs.Locator("#jobs-status")).ToHaveTextAsync(new Regex(@"^Page 1: 1 job of io \(\d read\)\.$"), new() { Timeout = DashboardPage.Generous });
        Assert.Empty(await JobsAxeViolationsAsync(page));
        await jobs.GetByLabel("Job type contains").FillAsync("nothing like it");
        await jobs.GetByRole(AriaRole.Button, new() { Name = "Search jobs" }).ClickAsync();
        await Expect(jobs.Locator("#jobs-status")).ToHaveTextAsync(new Regex(@"^Page 1: 0 jobs of io \(\d read\)\.$"), new() { Timeout = DashboardPage.Generous });
        Assert.Empty(await JobsAxeViolationsAsync(page));
    }

    private static ILocator Jobs(IPage page) => page.Locator("section#jobs");

    private static ILocator Rows(ILocator jobs) => jobs.Locator("#jobs-table tbody tr");

    private static ILocator DetailField(ILocator details, string label) =>
        details.Locator("dl.job-fields > div").Filter(new() { Has = details.Page.GetByText(label, new() { Exact = true }) }).Locator("dd");

    private static async Task<string[]> RowIdsAsync(ILocator jobs) =>
        [.. await Rows(jobs).Locator("td:first-child button").AllTextContentsAsync()];

    /// <summary>Runs axe-core on the jobs section alone: every violation there, whatever its impact.</summary>
    private static async Task<string[]> JobsAxeViolationsAsync(IPage page)
    {
        await page.EvaluateAsync(await File.ReadAllTextAsync(Path.Combine(AppContext.BaseDirectory, "Assets", "axe-core", "axe.min.js")));
        var violations = await page.EvaluateAsync<JsonElement>(
            """
            async () => {
              const result = await axe.run('#jobs', { resultTypes: ['violations'] });
              return result.violations.map(v => `${v.impact}: ${v.id} (${v.help}) at ${v.nodes.map(n => n.target.join(' ')).join(', ')}`);
            }
            """);
        return [.. violations.EnumerateArray().Select(v => v.GetString()!)];
    }

    private static string Text(string id) => id;

    private Task<IPage> OpenAsync(DashboardHost host) => DashboardPage.OpenAsync(chromium.Browser, _contexts, host, Log);

    private void Log(string line)
    {
        try
        {
            output.WriteLine(line);
        }
        catch (InvalidOperationException)
        {
            // The browser reported something after the test ended.
        }
    }

    private sealed class AlphaHandler : IJobHandler<string>
    {
        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken) => ValueTask.CompletedTask;
    }

    private sealed class BetaHandler : IJobHandler<string>
    {
        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken) => ValueTask.CompletedTask;
    }

    /// <summary>Fails with its payload as the error message (io has one attempt: it is dead-lettered at once).</summary>
    private sealed class FailingHandler : IJobHandler<string>
    {
        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken) => throw new InvalidOperationException(payload);
    }
}
