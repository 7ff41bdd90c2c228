using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Playwright;
using WorkQueue.Dashboard.Tests.TestSupport;
using static Microsoft.Playwright.Assertions;

namespace WorkQueue.Dashboard.Tests.Dashboard;

/// <summary>The dashboard page in a real headless Chromium, against a real Kestrel host on 127.0.0.1.</summary>
public sealed class DashboardPageTests(Chromium chromium, ITestOutputHelper output) : IClassFixture<Chromium>, IAsyncLifetime
{
    private static readonly float Generous = DashboardPage.Generous;
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
    public async Task Page_QueuesRunningJobs_ShowsEveryQueueWithNumbersThatChange()
    {
        await using var host = await DashboardHost.StartAsync();
        using var gate = new Gate();
        var page = await OpenAsync(host);

        // Every queue the provider has is rendered, under its own name.
        var names = host.App.Services.GetRequiredService<IWorkQueueProvider>().Queues.Select(q => q.Name).Order().ToArray();
        await Expect(page.Locator("section.queue")).ToHaveCountAsync(names.Length, new() { Timeout = Generous });
        var headings = await page.Locator("section.queue h2").AllTextContentsAsync();
        Assert.Equal(names, headings.Order().ToArray());

        // Five jobs held at a gate: the page shows them accepted and not yet done...
        var queue = host.Queue("default");
        for (int i = 0; i < 5; i++)
        {
            Assert.True(queue.TryEnqueue(gate.Block));
        }

        await Wait.ForAsync(gate.EnteredAsync(1), "the first job to start");
        var card = Card(page, "default");
        await Expect(Field(card, "Enqueued")).ToHaveTextAsync("5", new() { Timeout = Generous });
        await Expect(Field(card, "Unfinished")).ToHaveTextAsync("5", new() { Timeout = Generous });
        await Expect(Field(card, "Succeeded")).ToHaveTextAsync("0");
        await Expect(card.Locator(".depth-text")).Not.ToHaveTextAsync(new System.Text.RegularExpressions.Regex("^0 /"), new() { Timeout = Generous });

        // ...and once they run, done.
        gate.Open();
        await Expect(Field(card, "Succeeded")).ToHaveTextAsync("5", new() { Timeout = Generous });
        await Expect(Field(card, "Unfinished")).ToHaveTextAsync("0", new() { Timeout = Generous });
        await Expect(card.Locator(".depth-text")).ToHaveTextAsync(new System.Text.RegularExpressions.Regex("^0 / 1,000"), new() { Timeout = Generous });

        // The charts come from the server's history: points are drawn, and the throughput caption shows a number.
        await Expect(card.Locator("figure.chart").First.Locator("polyline")).ToHaveAttributeAsync("points", new System.Text.RegularExpressions.Regex(@"\d+(\.\d)?,\d+(\.\d)? \d"), new() { Timeout = Generous });

        // A queue named like markup is shown as text: no element was made from it, nothing ran.
        var hostile = Card(page, DashboardHost.HostileQueue);
        await Expect(hostile.Locator("h2")).ToHaveTextAsync(DashboardHost.HostileQueue);
        Assert.Equal(0, await page.Locator("#queues script").CountAsync());
        Assert.True(await page.EvaluateAsync<bool>("() => window.pwned === undefined"));

        await SaveScreenshotAsync(page, "dashboard-jobs.png");
    }

    [Fact]
    public async Task Controls_SetCountAutoPauseResume_ChangeTheQueueThroughTheApi()
    {
        await using var host = await DashboardHost.StartAsync();
        var page = await OpenAsync(host);
        var card = Card(page, "default");
        await Expect(Field(card, "Mode")).ToHaveTextAsync("auto", new() { Timeout = Generous });

        await card.GetByLabel("Worker count").FillAsync("3");
        await card.GetByRole(AriaRole.Button, new() { Name = "Set count" }).ClickAsync();
        await Wait.UntilAsync(() => Workers(host) is { Current: 3, Mode: "manual" }, "the API to report 3 manual workers");
        await Expect(Field(card, "Mode")).ToHaveTextAsync("manual", new() { Timeout = Generous });
        await Expect(Field(card, "Workers")).ToHaveTextAsync(new System.Text.RegularExpressions.Regex("^3 "), new() { Timeout = Generous });

        await card.GetByRole(AriaRole.Button, new() { Name = "Auto" }).ClickAsync();
        await Wait.UntilAsync(() => Workers(host).Mode == "auto", "the API to report automatic scaling");

        await card.GetByRole(AriaRole.Button, new() { Name = "Pause" }).ClickAsync();
        await Wait.UntilAsync(() => host.Control("default").GetSnapshot().IsPaused, "the queue to be paused");
        await Expect(card.Locator(".queue-head .badge").First).ToHaveTextAsync("paused", new() { Timeout = Generous });
        await card.GetByRole(AriaRole.Button, new() { Name = "Resume" }).ClickAsync();
        await Wait.UntilAsync(() => !host.Control("default").GetSnapshot().IsPaused, "the queue to be resumed");

        // A value the API refuses: its 400 problem is shown in the card, and nothing changed.
        await card.GetByLabel("Worker count").FillAsync("99");
        await card.GetByRole(AriaRole.Button, new() { Name = "Set count" }).ClickAsync();
        var alert = card.Locator("form.controls [role=alert]");
        await Expect(alert).ToContainTextAsync("400", new() { Timeout = Generous });
        await Expect(alert).ToContainTextAsync("\"count\" must be from 1 to 4");
        Assert.Equal("auto", Workers(host).Mode);
    }

    [Fact]
    public async Task DeadLetters_Opened_ListsTheFailedJobWithItsErrorAsText()
    {
        await using var host = await DashboardHost.StartAsync();
        var io = host.Queue("io");
        Assert.True(io.TryEnqueue(_ => throw new InvalidOperationException("<b>boom</b> & more")));
        await Wait.UntilAsync(() => host.Control("io").GetSnapshot().Totals.DeadLettered == 1, "the job to be dead-lettered");
        var page = await OpenAsync(host);
        var card = Card(page, "io");

        var summary = card.Locator("details.dead-letters summary");
        await Expect(summary).ToHaveTextAsync("Dead letters (1)", new() { Timeout = Generous });
        await summary.ClickAsync();

        var row = card.Locator("details.dead-letters tbody tr");
        await Expect(row).ToHaveCountAsync(1, new() { Timeout = Generous });
        await Expect(row.Locator("td").Nth(0)).ToContainTextAsync("attempt 1");
        await Expect(row.Locator("td").Nth(1).Locator(".type")).ToHaveTextAsync("System.InvalidOperationException");
        await Expect(row.Locator("td").Nth(1).Locator(".message")).ToHaveTextAsync("<b>boom</b> & more");
        Assert.Equal(0, await card.Locator("details.dead-letters b").CountAsync());
    }

    [Fact]
    public async Task Accessibility_AxeCore_ReportsNoSeriousOrCriticalViolation()
    {
        await using var host = await DashboardHost.StartAsync();
        var page = await OpenAsync(host);
        await Card(page, "io").Locator("details.dead-letters summary").ClickAsync();
        host.Queue("default").Schedule(_ => { }, TimeSpan.FromHours(1));
        await Card(page, "default").Locator("details.scheduled summary").ClickAsync();
        await Expect(Card(page, "default").Locator("details.scheduled tbody tr")).ToHaveCountAsync(1, new() { Timeout = Generous });
        await Expect(page.Locator("#recurring")).ToBeVisibleAsync(new() { Timeout = Generous });

        var all = await DashboardPage.AxeViolationsAsync(page);
        output.WriteLine(all.Length == 0 ? "axe-core: no violations." : "axe-core:\n" + string.Join('\n', all));
        Assert.False(all.Any(DashboardPage.IsSeriousOrCritical), "axe-core found serious or critical violations:\n" + string.Join('\n', all));
    }

    [Fact]
    public async Task ApiKey_AdminEndpointsAnswer401_PageAsksOnceAndSendsTheKey()
    {
        await using var host = await DashboardHost.StartAsync(requireKey: true);
        var page = await OpenAsync(host, waitForQueues: false);

        var key = page.GetByLabel("Admin key");
        await Expect(key).ToBeVisibleAsync(new() { Timeout = Generous });
        await Expect(page.Locator("#error")).ToContainTextAsync("401");
        await key.FillAsync(DashboardHost.AdminKey);
        await page.GetByRole(AriaRole.Button, new() { Name = "Use key" }).ClickAsync();
        await Expect(page.Locator("section.queue")).ToHaveCountAsync(3, new() { Timeout = Generous });

        // Kept for the tab: a reload does not ask again.
        await page.ReloadAsync();
        await Expect(page.Locator("section.queue")).ToHaveCountAsync(3, new() { Timeout = Generous });
        await Expect(key).ToBeHiddenAsync();
    }

    [Fact]
    public async Task WrongAdminPrefix_ShowsThe404AndWhereToLook()
    {
        await using var host = await DashboardHost.StartAsync(pageAdminPrefix: "/nowhere");
        var page = await OpenAsync(host, waitForQueues: false);

        var error = page.Locator("#error");
        await Expect(error).ToContainTextAsync("404", new() { Timeout = Generous });
        await Expect(error).ToContainTextAsync("No admin endpoints answer at /nowhere");
        await Expect(page.Locator("#status")).ToHaveTextAsync("Not updating");
    }

    [Fact]
    public async Task ContentSecurityPolicy_ScriptInjectedIntoThePage_DoesNotRun()
    {
        await using var host = await DashboardHost.StartAsync();
        var page = await OpenAsync(host);

        bool ran = await page.EvaluateAsync<bool>(
            """
            () => {
              const script = document.createElement('script');
              script.textContent = 'window.injectedRan = true';
              document.body.appendChild(script);
              return window.injectedRan === true;
            }
            """);

        Assert.False(ran, "An inline script injected into the dashboard ran: the Content-Security-Policy is not in force.");
    }

    [Fact]
    public async Task CrossOrigin_FormPostAndFetches_CannotPauseAQueue()
    {
        await using var host = await DashboardHost.StartAsync();
        await using var other = await OtherOrigin.StartAsync();
        var page = await OpenOtherOriginPageAsync(other);
        string pause = new Uri(host.Address, "/admin/workqueue/default/pause").ToString();

        // Scripts on another origin: a no-cors fetch can only send a simple content type; a JSON one needs a preflight.
        string noCors = await page.EvaluateAsync<string>(
            "url => fetch(url, { method: 'POST', mode: 'no-cors', body: '{}' }).then(r => r.type, e => 'error: ' + e.message)", pause);
        string json = await page.EvaluateAsync<string>(
            "url => fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }).then(r => 'status ' + r.status, e => 'blocked: ' + e.message)", pause);

        // A plain HTML form, as a malicious page would auto-submit it.
        var navigation = page.WaitForResponseAsync(pause);
        await page.EvaluateAsync(
            """
            url => {
              const form = document.createElement('form');
              form.method = 'POST';
              form.action = url;
              const field = document.createElement('input');
              field.name = 'x';
              field.value = '1';
              form.appendChild(field);
              document.body.appendChild(form);
              form.submit();
            }
            """,
            pause);
        var formResponse = await navigation;

        Assert.Equal("opaque", noCors);
        Assert.StartsWith("blocked", json);
        // Another port of 127.0.0.1 is another origin of the same site: the form is refused for where it comes from
        // (Sec-Fetch-Site: same-site) before its content type is looked at.
        Assert.Equal(403, formResponse.Status);
        Assert.False(host.Control("default").GetSnapshot().IsPaused, $"A cross-origin request paused the queue (no-cors: {noCors}, json: {json}).");
    }

    [Fact]
    public async Task LinkFromAnotherOrigin_OpensTheDashboardAndItsCallsAreServed()
    {
        // A link in a runbook or an alert: the page itself answers a top-level navigation from another site, and its
        // own calls are same-origin, though every other cross-origin request is refused.
        await using var host = await DashboardHost.StartAsync();
        await using var other = await OtherOrigin.StartAsync();
        var page = await OpenOtherOriginPageAsync(other);
        string dashboard = new Uri(host.Address, "/admin/workqueue/ui").ToString();

        var navigation = page.WaitForResponseAsync(dashboard);
        await page.EvaluateAsync("url => { const a = document.createElement('a'); a.href = url; a.textContent = 'dashboard'; document.body.appendChild(a); a.click(); }", dashboard);
        var response = await navigation;

        Assert.Equal(200, response.Status);
        Assert.Equal("same-site", await response.Request.HeaderValueAsync("sec-fetch-site"));
        await Expect(page.Locator("section.queue")).Not.ToHaveCountAsync(0, new() { Timeout = Generous });
    }

    [Fact]
    public async Task Scheduled_ListedAndCancelledWithTheKeyboard()
    {
        await using var host = await DashboardHost.StartAsync();
        var queue = host.Queue("default");
        string first = queue.Schedule(_ => { }, TimeSpan.FromHours(1));
        string second = queue.Schedule(_ => { }, TimeSpan.FromHours(2));
        var page = await OpenAsync(host);
        page.Dialog += (_, dialog) => dialog.AcceptAsync();
        var card = Card(page, "default");
        await Expect(Field(card, "Scheduled")).ToHaveTextAsync("2", new() { Timeout = Generous });

        var summary = card.Locator("details.scheduled summary");
        await Expect(summary).ToHaveTextAsync("Scheduled (2)", new() { Timeout = Generous });
        await summary.FocusAsync();
        await page.Keyboard.PressAsync("Enter");
        var rows = card.Locator("details.scheduled tbody tr");
        await Expect(rows).ToHaveCountAsync(2, new() { Timeout = Generous });
        await Expect(rows.First.Locator(".id")).ToHaveTextAsync(first.ToString(System.Globalization.CultureInfo.InvariantCulture));

        await card.GetByRole(AriaRole.Button, new() { Name = $"Cancel scheduled job {first}" }).FocusAsync();
        await page.Keyboard.PressAsync("Enter");
        await Expect(card.Locator("details.scheduled .done")).ToHaveTextAsync($"Cancelled scheduled job {first}.", new() { Timeout = Generous });
        await Expect(rows).ToHaveCountAsync(1, new() { Timeout = Generous });
        Assert.Equal(1, host.Control("default").GetSnapshot().Totals.Canceled);
        Assert.False(queue.CancelScheduled(first));
        Assert.True(queue.CancelScheduled(second));
        await Expect(summary).ToHaveTextAsync("Scheduled (0)", new() { Timeout = Generous });
    }

    [Fact]
    public async Task Recurring_RunNowPauseResumeRemoveFromThePage()
    {
        await using var host = await DashboardHost.StartAsync();
        var runs = host.App.Services.GetRequiredService<NightlyReport.Runs>();
        var page = await OpenAsync(host);
        page.Dialog += (_, dialog) => dialog.AcceptAsync();
        var section = page.Locator("#recurring");
        var row = section.Locator($"tr[data-id='{NightlyReport.Id}']");

        // The CLR thread pool's wait is shown beside WorkQueue's own threads.
        await Expect(page.Locator("#threadpool")).ToContainTextAsync("CLR thread pool: work items wait", new() { Timeout = Generous });
        await Expect(row.Locator("td").First).ToHaveTextAsync("0 2 * * * (UTC) on default", new() { Timeout = Generous });

        await section.GetByRole(AriaRole.Button, new() { Name = $"Run now: recurring job {NightlyReport.Id}" }).FocusAsync();
        await page.Keyboard.PressAsync("Enter");
        await Wait.UntilAsync(() => runs.Count == 1, "the triggered run");
        await Expect(row.Locator("td").Nth(2)).ToContainTextAsync("succeeded", new() { Timeout = Generous });

        await section.GetByRole(AriaRole.Button, new() { Name = $"Pause recurring job {NightlyReport.Id}" }).ClickAsync();
        await Expect(row.Locator("td").Nth(1)).ToHaveTextAsync("paused", new() { Timeout = Generous });
        var jobs = host.App.Services.GetRequiredService<IRecurringJobs>();
        Assert.True(jobs.Find(NightlyReport.Id)!.IsPaused);
        await section.GetByRole(AriaRole.Button, new() { Name = $"Resume recurring job {NightlyReport.Id}" }).ClickAsync();
        await Expect(row.Locator("td").Nth(1)).Not.ToHaveTextAsync("paused", new() { Timeout = Generous });

        await section.GetByRole(AriaRole.Button, new() { Name = $"Remove recurring job {NightlyReport.Id}" }).ClickAsync();
        await Expect(row).ToHaveCountAsync(0, new() { Timeout = Generous });
        Assert.Empty(jobs.GetAll());
    }

    private Task<IPage> OpenAsync(DashboardHost host, bool waitForQueues = true) =>
        DashboardPage.OpenAsync(chromium.Browser, _contexts, host, Log, waitForQueues);

    /// <summary>A page of another origin (<paramref name="other"/>), in a browser context of its own, as a malicious or a linking site.</summary>
    private async Task<IPage> OpenOtherOriginPageAsync(OtherOrigin other)
    {
        var context = await chromium.Browser.NewContextAsync();
        _contexts.Add(context);
        var page = await context.NewPageAsync();
        await page.GotoAsync(other.Address.ToString());
        return page;
    }

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

    private async Task SaveScreenshotAsync(IPage page, string name) =>
        output.WriteLine($"Screenshot: {await DashboardPage.SaveScreenshotAsync(page, name)}");

    private static ILocator Card(IPage page, string queue) => DashboardPage.Card(page, queue);

    private static ILocator Field(ILocator card, string label) => DashboardPage.Field(card, label);

    private static (int Current, string Mode) Workers(DashboardHost host)
    {
        using var response = host.Client.GetAsync("/admin/workqueue/default/workers").GetAwaiter().GetResult();
        response.EnsureSuccessStatusCode();
        using var json = JsonDocument.Parse(response.Content.ReadAsStringAsync().GetAwaiter().GetResult());
        return (json.RootElement.GetProperty("current").GetInt32(), json.RootElement.GetProperty("mode").GetString()!);
    }
}
