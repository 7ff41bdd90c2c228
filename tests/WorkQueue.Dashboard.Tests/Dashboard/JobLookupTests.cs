using System.Globalization;
using Microsoft.Playwright;
using WorkQueue.Dashboard.Tests.TestSupport;
using static Microsoft.Playwright.Assertions;
using static WorkQueue.Dashboard.Tests.TestSupport.DashboardPage;

namespace WorkQueue.Dashboard.Tests.Dashboard;

/// <summary>
/// A job found by id from a queue's card (<c>GET {prefix}/{queue}/jobs/{id}</c>) and cancelled from there
/// (<c>DELETE</c>), in a real headless Chromium against a real Kestrel host.
/// </summary>
public sealed class JobLookupTests(Chromium chromium, ITestOutputHelper output) : IClassFixture<Chromium>, IAsyncLifetime
{
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
    public async Task Lookup_QueuedJobCancelled_ShowsQueuedThenTheOutcomeAndTheTotalsCountIt()
    {
        await using var host = await DashboardHost.StartAsync();
        var runs = new Runs();
        host.Control("default").Pause();
        string id = (await host.Queue("default").EnqueueAsync(new CountingHandler(runs), "a", new JobOptions())).JobId;
        var page = await OpenAsync(host);
        page.Dialog += (_, dialog) => dialog.AcceptAsync();
        var card = Card(page, "default");
        var lookup = card.Locator("form.job-lookup");

        await card.GetByLabel("Job id").FillAsync(Text(id));
        await card.GetByRole(AriaRole.Button, new() { Name = "Find job" }).ClickAsync();
        await Expect(lookup.Locator("[role=status]")).ToContainTextAsync($"Job {id}: Queued, attempt 0", new() { Timeout = Generous });
        await Expect(JobField(lookup, "State")).ToHaveTextAsync("Queued");
        await Expect(JobField(lookup, "Job")).ToContainTextAsync(nameof(CountingHandler));
        await Expect(JobField(lookup, "Started at")).ToBeHiddenAsync();
        await Expect(Field(card, "Canceled")).ToHaveTextAsync("0");

        await lookup.GetByRole(AriaRole.Button, new() { Name = $"Cancel job {id}" }).ClickAsync();
        await Expect(lookup.Locator("[role=status]")).ToHaveTextAsync($"Canceled job {id}: it will not run.", new() { Timeout = Generous });
        await Expect(JobField(lookup, "State")).ToHaveTextAsync("Canceled");
        await Expect(lookup.GetByRole(AriaRole.Button, new() { Name = $"Cancel job {id}" })).ToBeHiddenAsync();
        await Expect(lookup.Locator("[role=alert]")).ToBeEmptyAsync();
        await Expect(Field(card, "Canceled")).ToHaveTextAsync("1", new() { Timeout = Generous });
        Assert.Equal(JobState.Canceled, (await host.Queue("default").GetJobAsync(id))!.State);

        // Resumed, the queue drops the cancelled job's item without running it.
        host.Control("default").Resume();
        await Wait.UntilAsync(() => host.Control("default").GetSnapshot().Totals.Unfinished == 0, "the queue to have no unfinished job");
        Assert.Equal(0, runs.Count);
        await Expect(Field(card, "Succeeded")).ToHaveTextAsync("0", new() { Timeout = Generous });
    }

    [Fact]
    public async Task Lookup_FinishedJob_ShowsHowItEndedWithoutACancelButton()
    {
        await using var host = await DashboardHost.StartAsync();
        var runs = new Runs();
        string id = (await host.Queue("default").EnqueueAsync(new CountingHandler(runs), "a", new JobOptions())).JobId;
        await Wait.UntilAsync(async () => (await host.Queue("default").GetJobAsync(id))?.State == JobState.Succeeded, "the job to succeed");
        string worker = (await host.Queue("default").GetJobAsync(id))!.WorkerName!;
        var page = await OpenAsync(host);
        var lookup = Card(page, "default").Locator("form.job-lookup");

        await lookup.GetByLabel("Job id").FillAsync(Text(id));
        await lookup.GetByRole(AriaRole.Button, new() { Name = "Find job" }).ClickAsync();

        await Expect(lookup.Locator("[role=status]")).ToContainTextAsync($"Job {id}: Succeeded, attempt 1", new() { Timeout = Generous });
        await Expect(JobField(lookup, "State")).ToHaveTextAsync("Succeeded");
        await Expect(JobField(lookup, "Attempt")).ToHaveTextAsync("1");
        await Expect(JobField(lookup, "Worker")).ToHaveTextAsync(worker);
        await Expect(JobField(lookup, "Started at")).ToBeVisibleAsync();
        await Expect(JobField(lookup, "Cancel")).ToBeHiddenAsync();
        await Expect(JobField(lookup, "Last error")).ToBeHiddenAsync();
        await Expect(lookup.GetByRole(AriaRole.Button, new() { Name = $"Cancel job {id}" })).ToBeHiddenAsync();
        Assert.Equal(1, runs.Count);
        Log($"Screenshot: {await SaveScreenshotAsync(page, "dashboard-job-lookup.png")}");
    }

    [Fact]
    public async Task Cancel_JobEndedSinceTheLookup_Shows409AndTheJobAsItEnded()
    {
        await using var host = await DashboardHost.StartAsync();
        var runs = new Runs();
        host.Control("default").Pause();
        string id = (await host.Queue("default").EnqueueAsync(new CountingHandler(runs), "a", new JobOptions())).JobId;
        var page = await OpenAsync(host);
        page.Dialog += (_, dialog) => dialog.AcceptAsync();
        var lookup = Card(page, "default").Locator("form.job-lookup");
        await lookup.GetByLabel("Job id").FillAsync(Text(id));
        await lookup.GetByRole(AriaRole.Button, new() { Name = "Find job" }).ClickAsync();
        await Expect(JobField(lookup, "State")).ToHaveTextAsync("Queued", new() { Timeout = Generous });

        // The job runs while the page still shows it queued; the operator's cancel comes too late.
        host.Control("default").Resume();
        await Wait.UntilAsync(async () => (await host.Queue("default").GetJobAsync(id))?.State == JobState.Succeeded, "the job to succeed");
        await lookup.GetByRole(AriaRole.Button, new() { Name = $"Cancel job {id}" }).ClickAsync();

        var alert = lookup.Locator("[role=alert]");
        await Expect(alert).ToContainTextAsync("409 Job already ended", new() { Timeout = Generous });
        await Expect(alert).ToContainTextAsync("(succeeded); nothing was cancelled.");
        await Expect(JobField(lookup, "State")).ToHaveTextAsync("Succeeded");
        await Expect(lookup.GetByRole(AriaRole.Button, new() { Name = $"Cancel job {id}" })).ToBeHiddenAsync();
        await Expect(lookup.Locator("[role=status]")).ToBeEmptyAsync();
        Assert.Equal(1, runs.Count);
    }

    [Fact]
    public async Task Cancel_RunningJobThatIgnoresIt_ShowsTheRequestThenThatItWasIgnored()
    {
        await using var host = await DashboardHost.StartAsync();
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        string id = (await host.Queue("default").EnqueueAsync(new HeldHandler(started, release.Task), "a", new JobOptions())).JobId;
        await Wait.ForAsync(started.Task, "the job to start");
        var page = await OpenAsync(host);
        page.Dialog += (_, dialog) => dialog.AcceptAsync();
        var lookup = Card(page, "default").Locator("form.job-lookup");
        var status = lookup.Locator("[role=status]");
        await lookup.GetByLabel("Job id").FillAsync(Text(id));
        await lookup.GetByRole(AriaRole.Button, new() { Name = "Find job" }).ClickAsync();
        await Expect(status).ToContainTextAsync($"Job {id}: Running, attempt 1", new() { Timeout = Generous });
        await Expect(JobField(lookup, "Cancel")).ToBeHiddenAsync();

        // Running: its token is cancelled, and the job may still end some other way, so Cancel stays offered.
        await lookup.GetByRole(AriaRole.Button, new() { Name = $"Cancel job {id}" }).ClickAsync();
        await Expect(status).ToContainTextAsync($"Asked job {id} to stop", new() { Timeout = Generous });
        await Expect(JobField(lookup, "State")).ToHaveTextAsync("Running");
        await Expect(JobField(lookup, "Cancel")).ToHaveTextAsync("requested");
        await Expect(lookup.GetByRole(AriaRole.Button, new() { Name = $"Cancel job {id}" })).ToBeVisibleAsync();

        // It returns normally: looked up again, it succeeded with the cancel ignored.
        release.SetResult();
        await Wait.UntilAsync(async () => (await host.Queue("default").GetJobAsync(id))?.State == JobState.Succeeded, "the job to succeed");
        await lookup.GetByRole(AriaRole.Button, new() { Name = "Find job" }).ClickAsync();
        await Expect(status).ToContainTextAsync($"Job {id}: Succeeded, attempt 1", new() { Timeout = Generous });
        await Expect(JobField(lookup, "Cancel")).ToHaveTextAsync("requested, ignored by the job");
        await Expect(lookup.GetByRole(AriaRole.Button, new() { Name = $"Cancel job {id}" })).ToBeHiddenAsync();
    }

    [Fact]
    public async Task Lookup_UnknownId_ShowsThe404()
    {
        await using var host = await DashboardHost.StartAsync();
        var page = await OpenAsync(host);
        var lookup = Card(page, "default").Locator("form.job-lookup");

        await lookup.GetByLabel("Job id").FillAsync("987654");
        await lookup.GetByRole(AriaRole.Button, new() { Name = "Find job" }).ClickAsync();

        var alert = lookup.Locator("[role=alert]");
        await Expect(alert).ToContainTextAsync("404 Unknown job", new() { Timeout = Generous });
        await Expect(alert).ToContainTextAsync("Queue 'default' knows no job '987654'");
        await Expect(lookup.Locator(".job-result")).ToBeHiddenAsync();
    }

    [Fact]
    public async Task Lookup_NotAJobId_ShowsTheValidationMessage()
    {
        await using var host = await DashboardHost.StartAsync();
        var page = await OpenAsync(host);
        var lookup = Card(page, "default").Locator("form.job-lookup");
        var alert = lookup.Locator("[role=alert]");
        var input = lookup.GetByLabel("Job id");

        // Not digits: said on the page, the focus back in the field (a path such as ".." is never sent).
        await input.FillAsync("abc");
        await lookup.GetByRole(AriaRole.Button, new() { Name = "Find job" }).ClickAsync();
        await Expect(alert).ToHaveTextAsync("Enter a job id: a whole number from 0, as EnqueueResult.JobId and Schedule return it.", new() { Timeout = Generous });
        await Expect(input).ToBeFocusedAsync();

        // Digits beyond a job id's range: the API's 400 and its words.
        await input.FillAsync("99999999999999999999");
        await lookup.GetByRole(AriaRole.Button, new() { Name = "Find job" }).ClickAsync();
        await Expect(alert).ToContainTextAsync("400", new() { Timeout = Generous });
        await Expect(alert).ToContainTextAsync("\"id\" must be a job id (a whole number from 0, as EnqueueResult.JobId and Schedule return it); it was '99999999999999999999'.");
        await Expect(lookup.Locator(".job-result")).ToBeHiddenAsync();
    }

    [Fact]
    public async Task Lookup_KeyboardOnly_TabTypeEnterThenCancel()
    {
        await using var host = await DashboardHost.StartAsync();
        host.Control("default").Pause();
        string id = host.Queue("default").Schedule(_ => { }, TimeSpan.FromHours(1));
        var page = await OpenAsync(host);
        page.Dialog += (_, dialog) => dialog.AcceptAsync();
        var lookup = Card(page, "default").Locator("form.job-lookup");
        var input = lookup.GetByLabel("Job id");

        // From the card's last control before the lookup, Tab reaches the field.
        await Card(page, "default").GetByRole(AriaRole.Button, new() { Name = "Resume" }).FocusAsync();
        await page.Keyboard.PressAsync("Tab");
        await Expect(input).ToBeFocusedAsync();
        Assert.True(await input.EvaluateAsync<bool>("e => e.matches(':focus-visible')"), "The focused job id field shows no focus ring.");
        await page.Keyboard.TypeAsync(Text(id));
        await page.Keyboard.PressAsync("Enter");

        var status = lookup.Locator("[role=status]");
        await Expect(status).ToContainTextAsync($"Job {id}: Scheduled, attempt 0", new() { Timeout = Generous });
        await Expect(JobField(lookup, "Due at")).ToBeVisibleAsync();
        await Expect(input).ToBeFocusedAsync();

        // The result as shown, with its Cancel button, passes axe-core.
        var all = await AxeViolationsAsync(page);
        output.WriteLine(all.Length == 0 ? "axe-core: no violations." : "axe-core:\n" + string.Join('\n', all));
        Assert.False(all.Any(IsSeriousOrCritical), "axe-core found serious or critical violations:\n" + string.Join('\n', all));

        // Tab on to Cancel (past Find job), Enter, confirm: the job is cancelled and the focus goes back to the field.
        var cancel = lookup.GetByRole(AriaRole.Button, new() { Name = $"Cancel job {id}" });
        await page.Keyboard.PressAsync("Tab");
        await page.Keyboard.PressAsync("Tab");
        await Expect(cancel).ToBeFocusedAsync();
        await page.Keyboard.PressAsync("Enter");
        await Expect(status).ToHaveTextAsync($"Canceled job {id}: it will not run.", new() { Timeout = Generous });
        await Expect(input).ToBeFocusedAsync();
        Assert.Equal(JobState.Canceled, (await host.Queue("default").GetJobAsync(id))!.State);
        Assert.False(host.Queue("default").CancelScheduled(id));
    }

    private Task<IPage> OpenAsync(DashboardHost host) => DashboardPage.OpenAsync(chromium.Browser, _contexts, host, Log);

    /// <summary>The value under a label in the job lookup's result.</summary>
    private static ILocator JobField(ILocator lookup, string label) =>
        lookup.Locator("dl.job-fields > div").Filter(new() { Has = lookup.Page.GetByText(label, new() { Exact = true }) }).Locator("dd");

    private static string Text(string id) => id;

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

    private sealed class Runs
    {
        private int _count;

        public int Count => Volatile.Read(ref _count);

        public void Add() => Interlocked.Increment(ref _count);
    }

    /// <summary>Runs until released, never looking at its token: a cancel of it is ignored.</summary>
    private sealed class HeldHandler(TaskCompletionSource started, Task release) : IJobHandler<string>
    {
        public async ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
        {
            started.TrySetResult();
            await release;
        }
    }

    private sealed class CountingHandler(Runs runs) : IJobHandler<string>
    {
        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
        {
            runs.Add();
            return ValueTask.CompletedTask;
        }
    }
}
