using Microsoft.Playwright;
using WorkQueue.Dashboard.Tests.TestSupport;
using static Microsoft.Playwright.Assertions;
using static WorkQueue.Dashboard.Tests.TestSupport.DashboardPage;

namespace WorkQueue.Dashboard.Tests.Dashboard;

/// <summary>
/// The dashboard's job browser over a durable queue (its jobs read from Redis): string ids, paging, a job's attempts,
/// cancel of a running job, in a real headless Chromium against a real Kestrel host and a real redis-server.
/// </summary>
public sealed class DurableJobBrowserTests(Chromium chromium, RedisServerFixture redis, ITestOutputHelper output)
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
    public async Task Search_DurableQueueDeadLettered_ListsStringIdsAndDetailsShowTheAttemptErrorAsText()
    {
        var setup = DurableSetup.New(redis.Server);
        setup.Jobs.Behavior = static (_, _, _) => throw new InvalidOperationException(HostileError);
        await using var host = await DashboardHost.StartAsync(durable: setup);
        string id = await host.EnqueueDurableAsync(new PaymentJob(1));
        await Wait.UntilAsync(() => host.GetJsonAsync($"/{Queue}/jobs/{id}").GetAwaiter().GetResult().GetProperty("state").GetString() == "deadLettered", "the job to be dead-lettered");
        var page = await OpenAsync(host);
        var jobs = page.Locator("section#jobs");

        await jobs.GetByLabel("Queue").SelectOptionAsync(Queue);
        await jobs.GetByLabel("State").SelectOptionAsync("deadLettered");
        await jobs.GetByRole(AriaRole.Button, new() { Name = "Search jobs" }).ClickAsync();

        await Expect(jobs.Locator("#jobs-status")).ToHaveTextAsync($"Page 1: 1 job of {Queue} (1 read).", new() { Timeout = Generous });
        var row = jobs.Locator("#jobs-table tbody tr");
        await Expect(row.Locator("td:first-child button")).ToHaveTextAsync(id);
        await Expect(row.Locator("td.state")).ToHaveTextAsync("Dead-lettered");

        await jobs.GetByRole(AriaRole.Button, new() { Name = $"Job {id} details" }).ClickAsync();
        var details = jobs.Locator("#job-details");
        await Expect(details.GetByRole(AriaRole.Heading, new() { Name = $"Job {id} of {Queue}" })).ToBeFocusedAsync(new() { Timeout = Generous });
        var attempts = details.Locator("#job-details-attempts li");
        await Expect(attempts).ToHaveCountAsync(1);
        await Expect(attempts.First).ToContainTextAsync("Attempt 1: Dead-lettered");
        await Expect(attempts.First.Locator(".attempt-error")).ToContainTextAsync(HostileError);
        await Expect(details.GetByRole(AriaRole.Button, new() { Name = $"Cancel job {id}" })).ToBeHiddenAsync();

        // The error is text: no element was made from it, nothing ran.
        Assert.Equal(0, await jobs.Locator("img").CountAsync());
        Assert.True(await page.EvaluateAsync<bool>("() => window.pwned === undefined"));
    }

    [Fact]
    public async Task SearchById_DurableRunningJob_CancelAsksItToStopAndItEndsCanceled()
    {
        var setup = DurableSetup.New(redis.Server);
        setup.Jobs.Behavior = static async (_, _, ct) => await Task.Delay(Timeout.Infinite, ct);
        await using var host = await DashboardHost.StartAsync(durable: setup);
        string id = await host.EnqueueDurableAsync(new PaymentJob(1));
        await setup.Jobs.WaitUntilAsync(() => setup.Jobs.Started == 1, "the job to start");
        var page = await OpenAsync(host);
        page.Dialog += (_, dialog) => dialog.AcceptAsync();
        var jobs = page.Locator("section#jobs");

        await jobs.GetByLabel("Queue").SelectOptionAsync(Queue);
        await jobs.GetByLabel("Job id").FillAsync(id);
        await jobs.GetByRole(AriaRole.Button, new() { Name = "Search jobs" }).ClickAsync();

        var details = jobs.Locator("#job-details");
        await Expect(details.GetByRole(AriaRole.Heading, new() { Name = $"Job {id} of {Queue}" })).ToBeFocusedAsync(new() { Timeout = Generous });
        await Expect(details.Locator("#job-details-attempts li").First).ToContainTextAsync("Attempt 1: Running");
        await details.GetByRole(AriaRole.Button, new() { Name = $"Cancel job {id}" }).ClickAsync();

        await Expect(details.Locator("#job-details-status")).ToHaveTextAsync($"Asked job {id} to stop: its cancellation token is cancelled; it ends when its code gives up.", new() { Timeout = Generous });
        await Wait.UntilAsync(() => host.GetJsonAsync($"/{Queue}/jobs/{id}").GetAwaiter().GetResult().GetProperty("state").GetString() == "canceled", "the job to end canceled");
    }

    [Fact]
    public async Task Paging_DurableQueueSucceededJobs_NextAndPreviousWalkTheCursorNewestFirst()
    {
        var setup = DurableSetup.New(redis.Server);
        await using var host = await DashboardHost.StartAsync(durable: setup);
        for (int n = 0; n < 25; n++)
        {
            await host.EnqueueDurableAsync(new PaymentJob(n));
        }

        await setup.Jobs.WaitUntilAsync(() => setup.Jobs.Succeeded == 25, "25 jobs to succeed");
        await Wait.UntilAsync(() => host.GetJsonAsync($"/{Queue}/jobs?state=succeeded&limit=500").GetAwaiter().GetResult().GetProperty("jobs").GetArrayLength() == 25, "25 succeeded jobs in Redis");
        var page = await OpenAsync(host);
        var jobs = page.Locator("section#jobs");

        await jobs.GetByLabel("Queue").SelectOptionAsync(Queue);
        await jobs.GetByLabel("State").SelectOptionAsync("succeeded");
        await jobs.GetByRole(AriaRole.Button, new() { Name = "Search jobs" }).ClickAsync();

        var ids = jobs.Locator("#jobs-table tbody tr td:first-child button");
        await Expect(jobs.Locator("#jobs-status")).ToContainTextAsync("Page 1: 20 jobs", new() { Timeout = Generous });
        string[] first = [.. await ids.AllTextContentsAsync()];
        await jobs.GetByRole(AriaRole.Button, new() { Name = "Next page" }).ClickAsync();
        await Expect(jobs.Locator("#jobs-status")).ToContainTextAsync("Page 2: 5 jobs", new() { Timeout = Generous });
        string[] second = [.. await ids.AllTextContentsAsync()];
        Assert.Equal(25, first.Concat(second).Distinct().Count());
        await jobs.GetByRole(AriaRole.Button, new() { Name = "Previous page" }).ClickAsync();
        await Expect(jobs.Locator("#jobs-status")).ToContainTextAsync("Page 1: 20 jobs", new() { Timeout = Generous });
        Assert.Equal(first, await ids.AllTextContentsAsync());
    }

    private Task<IPage> OpenAsync(DashboardHost host) => DashboardPage.OpenAsync(chromium.Browser, _contexts, host, Log);

    private void Log(string line)
    {
        try
        {
            output.WriteLine(line);
        }
        catch (InvalidOperationException)
        {
            // The test has ended.
        }
    }
}
