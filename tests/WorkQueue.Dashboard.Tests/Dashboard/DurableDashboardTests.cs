using System.Text.RegularExpressions;
using Microsoft.Playwright;
using WorkQueue.Dashboard.Tests.TestSupport;
using static Microsoft.Playwright.Assertions;
using static WorkQueue.Dashboard.Tests.TestSupport.DashboardPage;

namespace WorkQueue.Dashboard.Tests.Dashboard;

/// <summary>
/// The dashboard over a durable queue, in a real headless Chromium against real Kestrel hosts and a real redis-server:
/// its Redis figures and consumers, and its dead letters requeued and deleted from the page.
/// </summary>
public sealed class DurableDashboardTests(Chromium chromium, RedisServerFixture redis, ITestOutputHelper output)
    : IClassFixture<Chromium>, IClassFixture<RedisServerFixture>, IAsyncLifetime
{
    private const string Queue = DashboardHost.DurableQueue;
    private const string HostileError = "<img src=x onerror=\"window.pwned=1\"> & declined";
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
    public async Task DurableQueue_JobsHeldOnTwoInstances_ShowsRedisFiguresThatChangeAndMarksThisConsumer()
    {
        // Each instance holds at most three jobs (two running, one prefetched), so four jobs reach both consumers.
        var setup = DurableSetup.New(redis.Server) with { Workers = 2, MaxConcurrency = null, Prefetch = 1 };
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        setup.Jobs.Behavior = async (_, _, _) => await release.Task;
        await using var host = await DashboardHost.StartAsync(durable: setup);
        await using var other = await DashboardHost.StartAsync(durable: setup);
        string mine = (await host.GetJsonAsync($"/{Queue}")).GetProperty("durable").GetProperty("consumer").GetString()!;
        string theirs = (await other.GetJsonAsync($"/{Queue}")).GetProperty("durable").GetProperty("consumer").GetString()!;
        var page = await OpenAsync(host);
        var card = Card(page, Queue);

        await Expect(card.Locator(".queue-head")).ToContainTextAsync("durable");
        await Expect(card.Locator(".queue-head")).ToContainTextAsync("Redis connected", new() { Timeout = Generous });
        await Expect(card.Locator(".redis .source")).ToContainTextAsync($"{setup.KeyPrefix}:{{{Queue}}}:stream");

        for (int n = 0; n < 4; n++)
        {
            await host.EnqueueDurableAsync(new PaymentJob(n));
        }

        // Four jobs held by their handlers, wherever they are: unfinished in Redis and pending on some consumer.
        await Expect(Field(card, "Stream length")).ToHaveTextAsync("4", new() { Timeout = Generous });
        await Expect(Field(card, "Pending")).ToHaveTextAsync("4", new() { Timeout = Generous });
        await Expect(Field(card, "Lag")).ToHaveTextAsync("0");
        await Expect(Field(card, "Dead letters")).ToHaveTextAsync("0");
        await Expect(card.Locator(".depth-line")).ToContainTextAsync("Unfinished in Redis");
        await Expect(card.Locator(".depth-text")).ToHaveTextAsync(new Regex("^4 / 1,000 "));

        // Both instances' consumers are listed, this process's marked as such (in words, not only by style), with the
        // jobs this process holds.
        var consumers = card.Locator("table.consumers tbody tr");
        await Expect(consumers).ToHaveCountAsync(2, new() { Timeout = Generous });
        var marked = consumers.Filter(new() { HasText = "this process" });
        await Expect(marked).ToHaveCountAsync(1);
        await Expect(marked.Locator("td").First).ToContainTextAsync(mine);
        await Expect(consumers.Filter(new() { HasText = theirs })).Not.ToContainTextAsync("this process");
        string held = (await host.GetJsonAsync($"/{Queue}")).GetProperty("durable").GetProperty("heldHere").GetInt32().ToString(System.Globalization.CultureInfo.InvariantCulture);
        Assert.NotEqual("0", held);
        Assert.NotEqual("4", held);
        await Expect(Field(card, "Held here")).ToHaveTextAsync(held, new() { Timeout = Generous });
        await Expect(marked.Locator("td").Nth(1)).ToHaveTextAsync(held, new() { Timeout = Generous });

        await SaveAsync(page, "dashboard-durable-busy.png");

        // Once they finish, the figures read from Redis fall back to zero and the totals count this process's share.
        release.SetResult();
        await setup.Jobs.WaitUntilAsync(() => setup.Jobs.Succeeded == 4, "four jobs to succeed");
        await Expect(Field(card, "Stream length")).ToHaveTextAsync("0", new() { Timeout = Generous });
        await Expect(Field(card, "Pending")).ToHaveTextAsync("0", new() { Timeout = Generous });
        await Expect(marked.Locator("td").Nth(1)).ToHaveTextAsync("0", new() { Timeout = Generous });
        await Expect(Field(card, "Held here")).ToHaveTextAsync("0", new() { Timeout = Generous });
        await Expect(card.Locator(".depth-text")).ToHaveTextAsync(new Regex("^0 / 1,000 "), new() { Timeout = Generous });
        await Expect(Field(card, "Succeeded")).ToHaveTextAsync(held, new() { Timeout = Generous });
    }

    [Fact]
    public async Task DeadLetter_RequeueClicked_RunsTheJobAgainAndLeavesTheList()
    {
        var setup = DurableSetup.New(redis.Server);
        bool failing = true;
        setup.Jobs.Behavior = (_, _, _) => Volatile.Read(ref failing) ? throw new InvalidOperationException(HostileError) : ValueTask.CompletedTask;
        await using var host = await DashboardHost.StartAsync(durable: setup);
        string jobId = await host.EnqueueDurableAsync(new PaymentJob(7));
        string id = (await DeadLettersAsync(host, 1))[0];
        var page = await OpenAsync(host);
        var card = Card(page, Queue);

        var summary = card.Locator("details.dead-letters summary");
        await Expect(summary).ToHaveTextAsync("Dead letters (1)", new() { Timeout = Generous });
        await Expect(Field(card, "Dead letters")).ToHaveTextAsync("1");
        await summary.ClickAsync();
        var rows = card.Locator("details.dead-letters tbody tr");
        await Expect(rows).ToHaveCountAsync(1, new() { Timeout = Generous });
        var cells = rows.First.Locator("td");
        // A checkbox (to select it for the bulk actions) comes first, then the job, the error and its buttons.
        await Expect(cells.Nth(1).Locator(".id")).ToHaveTextAsync(jobId);
        await Expect(cells.Nth(1).Locator(".sub").First).ToHaveTextAsync("attempt 1, failed");
        await Expect(cells.Nth(2).Locator(".type")).ToHaveTextAsync("System.InvalidOperationException");
        await Expect(cells.Nth(2).Locator(".message")).ToHaveTextAsync(HostileError);

        // The error is text: no element was made from it, nothing ran.
        Assert.Equal(0, await card.Locator("details.dead-letters img").CountAsync());
        Assert.True(await page.EvaluateAsync<bool>("() => window.pwned === undefined"));

        // The cause is fixed; the operator requeues the job from the page.
        Volatile.Write(ref failing, false);
        await card.GetByRole(AriaRole.Button, new() { Name = $"Requeue job {jobId}" }).ClickAsync();

        await setup.Jobs.WaitUntilAsync(() => setup.Jobs.CallsOf(7) == 2 && setup.Jobs.Succeeded == 1, "the requeued job to run again and succeed");
        await Expect(card.Locator("details.dead-letters [role=status]")).ToContainTextAsync($"Requeued job {jobId} as ", new() { Timeout = Generous });
        await Expect(rows).ToHaveCountAsync(0, new() { Timeout = Generous });
        Assert.DoesNotContain(id, await DeadLettersAsync(host, 0));
        await Expect(summary).ToHaveTextAsync("Dead letters (0)", new() { Timeout = Generous });
        await Expect(card.Locator("details.dead-letters [role=alert]")).ToBeEmptyAsync();
    }

    [Fact]
    public async Task DeadLetter_DeleteWithTheKeyboard_RemovesOnlyThatOneAndKeepsTheFocusInTheList()
    {
        var setup = DurableSetup.New(redis.Server);
        setup.Jobs.Behavior = static (_, _, _) => throw new InvalidOperationException("card declined");
        await using var host = await DashboardHost.StartAsync(durable: setup);
        string first = await host.EnqueueDurableAsync(new PaymentJob(1));
        await DeadLettersAsync(host, 1);
        string second = await host.EnqueueDurableAsync(new PaymentJob(2));
        var ids = await DeadLettersAsync(host, 2);
        var page = await OpenAsync(host);
        var card = Card(page, Queue);
        var summary = card.Locator("details.dead-letters summary");
        await Expect(summary).ToHaveTextAsync("Dead letters (2)", new() { Timeout = Generous });

        // Keyboard only: open the list, reach the newest dead letter's Delete button, confirm.
        await summary.FocusAsync();
        await page.Keyboard.PressAsync("Enter");
        var rows = card.Locator("details.dead-letters tbody tr");
        await Expect(rows).ToHaveCountAsync(2, new() { Timeout = Generous });
        await Expect(rows.First.Locator("td .id")).ToHaveTextAsync(second);
        var delete = card.GetByRole(AriaRole.Button, new() { Name = $"Delete the dead letter of job {second}" });
        string confirmation = string.Empty;
        page.Dialog += async (_, dialog) =>
        {
            confirmation = dialog.Message;
            await dialog.AcceptAsync();
        };
        for (int tabs = 0; tabs < 20 && !await delete.EvaluateAsync<bool>("b => b === document.activeElement"); tabs++)
        {
            await page.Keyboard.PressAsync("Tab");
        }

        await Expect(delete).ToBeFocusedAsync();
        await page.Keyboard.PressAsync("Enter");

        await Expect(card.Locator("details.dead-letters [role=status]")).ToHaveTextAsync($"Deleted the dead letter of job {second}.", new() { Timeout = Generous });
        await Expect(rows).ToHaveCountAsync(1, new() { Timeout = Generous });
        Assert.Contains(second, confirmation);
        Assert.Equal([ids[1]], await DeadLettersAsync(host, 1));
        Assert.Equal(1, setup.Jobs.CallsOf(2));

        // The focus went on to the Delete button of the row that took the deleted one's place.
        await Expect(card.GetByRole(AriaRole.Button, new() { Name = $"Delete the dead letter of job {first}" })).ToBeFocusedAsync();
    }

    [Fact]
    public async Task DeadLetter_GoneBeforeTheClick_ShowsThe404AndTheListAsItIs()
    {
        var setup = DurableSetup.New(redis.Server);
        setup.Jobs.Behavior = static (_, _, _) => throw new InvalidOperationException("card declined");
        await using var host = await DashboardHost.StartAsync(durable: setup);
        string jobId = await host.EnqueueDurableAsync(new PaymentJob(3));
        string id = (await DeadLettersAsync(host, 1))[0];
        var page = await OpenAsync(host);
        var card = Card(page, Queue);
        await card.Locator("details.dead-letters summary").ClickAsync();
        await Expect(card.Locator("details.dead-letters tbody tr")).ToHaveCountAsync(1, new() { Timeout = Generous });

        // Another operator deletes it first, while the page's polling is held back (so it still shows the row).
        var held = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var resume = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await page.RouteAsync(
            url => new Uri(url).AbsolutePath.TrimEnd('/') == "/admin/workqueue",
            async route =>
            {
                held.TrySetResult();
                await resume.Task;
                await route.ContinueAsync();
            });
        await Wait.ForAsync(held.Task, "the page's next poll");
        using var deleted = await host.Client.SendAsync(new HttpRequestMessage(HttpMethod.Delete, $"/admin/workqueue/{Queue}/dead-letters/{id}")
        {
            Content = new StringContent("{}", System.Text.Encoding.UTF8, "application/json"),
        });
        Assert.Equal(System.Net.HttpStatusCode.NoContent, deleted.StatusCode);
        await card.GetByRole(AriaRole.Button, new() { Name = $"Requeue job {jobId}" }).ClickAsync();

        var alert = card.Locator("details.dead-letters [role=alert]");
        await Expect(alert).ToContainTextAsync("404 Unknown dead letter", new() { Timeout = Generous });
        await Expect(alert).ToContainTextAsync($"no dead letter '{id}'");
        await Expect(card.Locator("details.dead-letters tbody tr")).ToHaveCountAsync(0, new() { Timeout = Generous });
        resume.SetResult();
        await Expect(card.Locator("details.dead-letters summary")).ToHaveTextAsync("Dead letters (0)", new() { Timeout = Generous });
        await Expect(alert).ToContainTextAsync("404 Unknown dead letter");
        Assert.Equal(1, setup.Jobs.CallsOf(3));
    }

    [Fact]
    public async Task DeadLetters_TwoOfThreeSelectedAndRequeued_TheyRunAndTheListShowsTheThird()
    {
        var setup = DurableSetup.New(redis.Server);
        bool failing = true;
        setup.Jobs.Behavior = (_, _, _) => Volatile.Read(ref failing) ? throw new InvalidOperationException("card declined") : ValueTask.CompletedTask;
        await using var host = await DashboardHost.StartAsync(durable: setup);
        string[] jobs = await DeadLetteredJobsAsync(host, 3);
        var page = await OpenAsync(host);
        var card = Card(page, Queue);
        var rows = await OpenDeadLettersAsync(card, 3);

        await card.GetByRole(AriaRole.Checkbox, new() { Name = $"Select job {jobs[0]}" }).CheckAsync();
        await card.GetByRole(AriaRole.Checkbox, new() { Name = $"Select job {jobs[1]}" }).CheckAsync();
        Volatile.Write(ref failing, false);
        await card.GetByRole(AriaRole.Button, new() { Name = "Requeue selected" }).ClickAsync();

        await setup.Jobs.WaitUntilAsync(() => setup.Jobs.CallsOf(0) == 2 && setup.Jobs.CallsOf(1) == 2 && setup.Jobs.Succeeded == 2, "the two requeued jobs to run again and succeed");
        await Expect(card.Locator("details.dead-letters [role=status]")).ToHaveTextAsync("Requeued 2 of 2 dead letters.", new() { Timeout = Generous });
        await Expect(rows).ToHaveCountAsync(1, new() { Timeout = Generous });
        await Expect(rows.First.Locator("td .id")).ToHaveTextAsync(jobs[2]);
        await Expect(card.Locator("details.dead-letters summary")).ToHaveTextAsync("Dead letters (1)", new() { Timeout = Generous });
        await DeadLettersAsync(host, 1);
        Assert.Equal(1, setup.Jobs.CallsOf(2));
        await Expect(card.Locator("details.dead-letters [role=alert]")).ToBeEmptyAsync();
    }

    [Fact]
    public async Task DeadLetters_AllSelectedAndDeleted_AsksFirstEmptiesTheListAndNoneRunsAgain()
    {
        var setup = DurableSetup.New(redis.Server);
        setup.Jobs.Behavior = static (_, _, _) => throw new InvalidOperationException("card declined");
        await using var host = await DashboardHost.StartAsync(durable: setup);
        string[] jobs = await DeadLetteredJobsAsync(host, 3);
        var page = await OpenAsync(host);
        var card = Card(page, Queue);
        var rows = await OpenDeadLettersAsync(card, 3);
        string confirmation = string.Empty;
        page.Dialog += async (_, dialog) =>
        {
            confirmation = dialog.Message;
            await dialog.AcceptAsync();
        };

        await card.GetByRole(AriaRole.Checkbox, new() { Name = "Select all shown" }).CheckAsync();
        foreach (string job in jobs)
        {
            await Expect(card.GetByRole(AriaRole.Checkbox, new() { Name = $"Select job {job}" })).ToBeCheckedAsync();
        }

        await card.GetByRole(AriaRole.Button, new() { Name = "Delete selected" }).ClickAsync();

        await Expect(card.Locator("details.dead-letters [role=status]")).ToHaveTextAsync("Deleted 3 of 3 dead letters.", new() { Timeout = Generous });
        Assert.Contains("Delete 3 dead letters", confirmation);
        await Expect(rows).ToHaveCountAsync(0, new() { Timeout = Generous });
        await Expect(card.Locator("details.dead-letters summary")).ToHaveTextAsync("Dead letters (0)", new() { Timeout = Generous });
        await DeadLettersAsync(host, 0);
        Assert.All(Enumerable.Range(0, 3), n => Assert.Equal(1, setup.Jobs.CallsOf(n)));
    }

    [Fact]
    public async Task DeadLetters_SomeGoneBeforeTheBulkRequeue_SaysHowManyWereNoLongerThere()
    {
        var setup = DurableSetup.New(redis.Server);
        bool failing = true;
        setup.Jobs.Behavior = (_, _, _) => Volatile.Read(ref failing) ? throw new InvalidOperationException("card declined") : ValueTask.CompletedTask;
        await using var host = await DashboardHost.StartAsync(durable: setup);
        string[] jobs = await DeadLetteredJobsAsync(host, 3);
        string[] ids = await DeadLettersAsync(host, 3);
        var page = await OpenAsync(host);
        var card = Card(page, Queue);
        await OpenDeadLettersAsync(card, 3);
        await card.GetByRole(AriaRole.Checkbox, new() { Name = "Select all shown" }).CheckAsync();

        // Another operator deletes the newest while the page's polling is held back (so it still shows and selects it).
        var held = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var resume = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await page.RouteAsync(
            url => new Uri(url).AbsolutePath.TrimEnd('/') == "/admin/workqueue",
            async route =>
            {
                held.TrySetResult();
                await resume.Task;
                await route.ContinueAsync();
            });
        await Wait.ForAsync(held.Task, "the page's next poll");
        using var deleted = await host.Client.SendAsync(new HttpRequestMessage(HttpMethod.Delete, $"/admin/workqueue/{Queue}/dead-letters/{ids[0]}")
        {
            Content = new StringContent("{}", System.Text.Encoding.UTF8, "application/json"),
        });
        Assert.Equal(System.Net.HttpStatusCode.NoContent, deleted.StatusCode);
        Volatile.Write(ref failing, false);
        await card.GetByRole(AriaRole.Button, new() { Name = "Requeue selected" }).ClickAsync();

        await Expect(card.Locator("details.dead-letters [role=status]")).ToHaveTextAsync("Requeued 2 of 3 dead letters; 1 was no longer there.", new() { Timeout = Generous });
        await Expect(card.Locator("details.dead-letters tbody tr")).ToHaveCountAsync(0, new() { Timeout = Generous });
        resume.SetResult();
        await setup.Jobs.WaitUntilAsync(() => setup.Jobs.Succeeded == 2, "the two requeued jobs to succeed");
        Assert.Equal(1, setup.Jobs.CallsOf(2));
        Assert.Equal(jobs.Length, setup.Jobs.Succeeded + 1);
    }

    [Fact]
    public async Task DeadLetters_NothingSelected_BulkButtonsAreDisabled()
    {
        var setup = DurableSetup.New(redis.Server);
        setup.Jobs.Behavior = static (_, _, _) => throw new InvalidOperationException("card declined");
        await using var host = await DashboardHost.StartAsync(durable: setup);
        string[] jobs = await DeadLetteredJobsAsync(host, 2);
        var page = await OpenAsync(host);
        var card = Card(page, Queue);
        await OpenDeadLettersAsync(card, 2);
        var requeue = card.GetByRole(AriaRole.Button, new() { Name = "Requeue selected" });
        var delete = card.GetByRole(AriaRole.Button, new() { Name = "Delete selected" });
        var all = card.GetByRole(AriaRole.Checkbox, new() { Name = "Select all shown" });
        var one = card.GetByRole(AriaRole.Checkbox, new() { Name = $"Select job {jobs[0]}" });

        await Expect(requeue).ToBeDisabledAsync();
        await Expect(delete).ToBeDisabledAsync();
        await one.CheckAsync();
        await Expect(requeue).ToBeEnabledAsync();
        await Expect(delete).ToBeEnabledAsync();
        Assert.True(await all.EvaluateAsync<bool>("b => b.indeterminate"));
        await one.UncheckAsync();
        await Expect(requeue).ToBeDisabledAsync();
        await Expect(delete).ToBeDisabledAsync();
        await all.CheckAsync();
        await all.UncheckAsync();
        await Expect(one).Not.ToBeCheckedAsync();
        await Expect(requeue).ToBeDisabledAsync();

        // The page's polling keeps the rows (and what is ticked) while nothing changes.
        await one.CheckAsync();
        await Expect(Field(card, "Dead letters")).ToHaveTextAsync("2");
        for (int polls = 0; polls < 2; polls++)
        {
            await page.WaitForResponseAsync(r => new Uri(r.Url).AbsolutePath.TrimEnd('/') == "/admin/workqueue", new() { Timeout = Generous });
        }
        await Expect(one).ToBeCheckedAsync();
        await Expect(requeue).ToBeEnabledAsync();
        Assert.Equal(1, setup.Jobs.CallsOf(0));
    }

    [Fact]
    public async Task DeadLetters_BulkRequeueWithTheKeyboard_SpaceTicksTabReachesTheButtonEnterRequeues()
    {
        var setup = DurableSetup.New(redis.Server);
        bool failing = true;
        setup.Jobs.Behavior = (_, _, _) => Volatile.Read(ref failing) ? throw new InvalidOperationException("card declined") : ValueTask.CompletedTask;
        await using var host = await DashboardHost.StartAsync(durable: setup);
        string[] jobs = await DeadLetteredJobsAsync(host, 2);
        var page = await OpenAsync(host);
        var card = Card(page, Queue);
        var summary = card.Locator("details.dead-letters summary");
        await Expect(summary).ToHaveTextAsync("Dead letters (2)", new() { Timeout = Generous });

        await summary.FocusAsync();
        await page.Keyboard.PressAsync("Enter");
        var rows = card.Locator("details.dead-letters tbody tr");
        await Expect(rows).ToHaveCountAsync(2, new() { Timeout = Generous });
        var box = card.GetByRole(AriaRole.Checkbox, new() { Name = $"Select job {jobs[1]}" });
        await TabToAsync(page, box, "Tab");
        await page.Keyboard.PressAsync("Space");
        await Expect(box).ToBeCheckedAsync();

        // The bulk buttons sit above the list: back up to them.
        var requeue = card.GetByRole(AriaRole.Button, new() { Name = "Requeue selected" });
        await TabToAsync(page, requeue, "Shift+Tab");
        Volatile.Write(ref failing, false);
        await page.Keyboard.PressAsync("Enter");

        await setup.Jobs.WaitUntilAsync(() => setup.Jobs.CallsOf(1) == 2 && setup.Jobs.Succeeded == 1, "the requeued job to run again and succeed");
        await Expect(card.Locator("details.dead-letters [role=status]")).ToHaveTextAsync("Requeued 1 of 1 dead letter.", new() { Timeout = Generous });
        await Expect(rows).ToHaveCountAsync(1, new() { Timeout = Generous });
        await Expect(rows.First.Locator("td .id")).ToHaveTextAsync(jobs[0]);
        Assert.Equal(1, setup.Jobs.CallsOf(0));

        // The pressed button is disabled again (nothing is ticked): the focus stays in the group, on Select all shown.
        await Expect(requeue).ToBeDisabledAsync();
        await Expect(card.GetByRole(AriaRole.Checkbox, new() { Name = "Select all shown" })).ToBeFocusedAsync();
    }

    [Fact]
    public async Task Accessibility_DurableAndInMemoryDeadLettersOpen_AxeReportsNoSeriousOrCriticalViolation()
    {
        var setup = DurableSetup.New(redis.Server);
        setup.Jobs.Behavior = static (_, _, _) => throw new InvalidOperationException(HostileError);
        await using var host = await DashboardHost.StartAsync(durable: setup);
        await host.EnqueueDurableAsync(new PaymentJob(1));
        Assert.True(host.Queue("io").TryEnqueue(_ => throw new InvalidOperationException("in memory")));
        await DeadLettersAsync(host, 1);
        await Wait.UntilAsync(() => host.Control("io").GetSnapshot().Totals.DeadLettered == 1, "the in-memory job to be dead-lettered");
        var page = await OpenAsync(host);
        var durable = Card(page, Queue);
        var memory = Card(page, "io");
        await durable.Locator("details.dead-letters summary").ClickAsync();
        await memory.Locator("details.dead-letters summary").ClickAsync();
        await Expect(durable.Locator("details.dead-letters tbody tr")).ToHaveCountAsync(1, new() { Timeout = Generous });
        await Expect(memory.Locator("details.dead-letters tbody tr")).ToHaveCountAsync(1, new() { Timeout = Generous });
        await Expect(durable.Locator("table.consumers tbody tr")).ToHaveCountAsync(1, new() { Timeout = Generous });

        // An in-memory dead letter holds no runnable job: no action is offered for it.
        Assert.Equal(0, await memory.Locator("details.dead-letters button").Filter(new() { HasTextRegex = new Regex("Requeue|Delete") }).CountAsync());
        Assert.Equal(2, await durable.Locator("details.dead-letters tbody button").CountAsync());

        var all = await AxeViolationsAsync(page);
        output.WriteLine(all.Length == 0 ? "axe-core: no violations." : "axe-core:\n" + string.Join('\n', all));
        Assert.False(all.Any(IsSeriousOrCritical), "axe-core found serious or critical violations:\n" + string.Join('\n', all));
        await SaveAsync(page, "dashboard-durable-dead-letters.png");
    }

    [Fact]
    public async Task JobLookup_DurableQueue_RefusesANumberAndFindsAStringId()
    {
        var setup = DurableSetup.New(redis.Server);
        await using var host = await DashboardHost.StartAsync(durable: setup);
        string id = await host.EnqueueDurableAsync(new PaymentJob(1));
        await setup.Jobs.WaitUntilAsync(() => setup.Jobs.Succeeded == 1, "the job to succeed");
        var page = await OpenAsync(host);
        var lookup = Card(page, Queue).Locator("form.job-lookup");

        await lookup.GetByLabel("Job id").FillAsync("1");
        await lookup.GetByRole(AriaRole.Button, new() { Name = "Find job" }).ClickAsync();
        await Expect(lookup.Locator("[role=alert]")).ToContainTextAsync("Enter a durable job id", new() { Timeout = Generous });
        await Expect(lookup.Locator(".job-result")).ToBeHiddenAsync();

        await lookup.GetByLabel("Job id").FillAsync(id);
        await lookup.GetByRole(AriaRole.Button, new() { Name = "Find job" }).ClickAsync();
        await Expect(lookup.Locator("[role=status]")).ToContainTextAsync($"Job {id}: Succeeded", new() { Timeout = Generous });
        await Expect(lookup.Locator("[role=alert]")).ToBeEmptyAsync();
    }

    private Task<IPage> OpenAsync(DashboardHost host) => DashboardPage.OpenAsync(chromium.Browser, _contexts, host, Log);

    /// <summary>Waits until the durable queue lists <paramref name="count"/> dead letters (through the API) and returns their ids, newest first.</summary>
    private static async Task<string[]> DeadLettersAsync(DashboardHost host, int count)
    {
        string[] ids = [];
        await Wait.UntilAsync(
            () =>
            {
                var list = host.GetJsonAsync($"/{Queue}/dead-letters").GetAwaiter().GetResult();
                ids = [.. list.EnumerateArray().Select(l => l.GetProperty("id").GetString()!)];
                return ids.Length == count;
            },
            $"{count} dead letter(s) listed by the API");
        return ids;
    }

    /// <summary>Enqueues <paramref name="count"/> failing jobs (N = 0, 1, ...) one after another and returns their job ids once each is dead-lettered.</summary>
    private static async Task<string[]> DeadLetteredJobsAsync(DashboardHost host, int count)
    {
        var jobs = new string[count];
        for (int n = 0; n < count; n++)
        {
            jobs[n] = await host.EnqueueDurableAsync(new PaymentJob(n));
            await DeadLettersAsync(host, n + 1);
        }

        return jobs;
    }

    private static async Task<ILocator> OpenDeadLettersAsync(ILocator card, int count)
    {
        var summary = card.Locator("details.dead-letters summary");
        await Expect(summary).ToHaveTextAsync($"Dead letters ({count})", new() { Timeout = Generous });
        await summary.ClickAsync();
        var rows = card.Locator("details.dead-letters tbody tr");
        await Expect(rows).ToHaveCountAsync(count, new() { Timeout = Generous });
        return rows;
    }

    private static async Task TabToAsync(IPage page, ILocator target, string key)
    {
        for (int tabs = 0; tabs < 20 && !await target.EvaluateAsync<bool>("e => e === document.activeElement"); tabs++)
        {
            await page.Keyboard.PressAsync(key);
        }

        await Expect(target).ToBeFocusedAsync();
    }

    private async Task SaveAsync(IPage page, string name) => Log($"Screenshot: {await SaveScreenshotAsync(page, name)}");

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
}
