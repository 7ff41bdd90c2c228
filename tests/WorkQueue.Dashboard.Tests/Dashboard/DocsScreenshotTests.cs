using Microsoft.Playwright;
using WorkQueue.Dashboard.Tests.TestSupport;
using static Microsoft.Playwright.Assertions;
using static WorkQueue.Dashboard.Tests.TestSupport.DashboardPage;

namespace WorkQueue.Dashboard.Tests.Dashboard;

/// <summary>
/// Not a test of behaviour: makes the documentation's picture of a durable queue, on demand. Two instances of a service
/// share a durable queue on a real redis-server under a synthetic load (varying rate, slow jobs, some retried, some
/// dead-lettered) and an in-memory queue; the page is photographed from one of them with the dead letters open. Run it
/// with the built test program:
/// <code>
/// WORKQUEUE_SCREENSHOT=$PWD/docs/dashboard-durable.png \
///   tests/WorkQueue.Dashboard.Tests/bin/Release/net10.0/WorkQueue.Dashboard.Tests -class WorkQueue.Dashboard.Tests.Dashboard.DocsScreenshotTests -explicit only
/// </code>
/// </summary>
public sealed class DocsScreenshotTests(Chromium chromium, RedisServerFixture redis, ITestOutputHelper output)
    : IClassFixture<Chromium>, IClassFixture<RedisServerFixture>, IAsyncLifetime
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

    [Fact(Explicit = true)]
    public async Task DurableQueueUnderSyntheticLoad_SavesTheScreenshot()
    {
        var setup = DurableSetup.New(redis.Server) with { Capacity = 20_000, MaxAttempts = 3 };

        // Jobs of 20 to 60 ms; every 7th fails its first attempt (retried from Redis), every 5,000th always fails
        // (a few dead letters, so the list fits the picture).
        setup.Jobs.Behavior = async (job, call, cancellationToken) =>
        {
            await Task.Delay(20 + (job.N * 37 % 41), cancellationToken);
            if (job.N % 5_000 == 0)
            {
                throw new InvalidOperationException($"Payment provider declined order o-{job.N}: card expired");
            }

            if (job.N % 7 == 0 && call == 1)
            {
                throw new TimeoutException($"Payment provider did not answer for order o-{job.N} within 5 s");
            }
        };
        await using var host = await DashboardHost.StartAsync(durable: setup, testQueues: false);
        await using var other = await DashboardHost.StartAsync(durable: setup, testQueues: false);
        var memory = host.Queue("default");

        // Phases of (seconds, durable jobs per second): steady, a burst the two instances cannot keep up with, steady.
        // The picture is taken about 10 s into the last phase (timed from here, not exactly), while the backlog drains.
        (int Seconds, int Rate)[] phases = [(30, 150), (20, 1500), (40, 150)];
        var shoot = TimeSpan.FromSeconds(phases[0].Seconds + phases[1].Seconds + 10);
        using var stop = new CancellationTokenSource();
        var load = Task.Run(async () =>
        {
            int n = 1;
            using var ticks = new PeriodicTimer(TimeSpan.FromMilliseconds(100));
            foreach (var (seconds, rate) in phases)
            {
                for (int tick = 0; tick < seconds * 10 && !stop.IsCancellationRequested; tick++)
                {
                    await ticks.WaitForNextTickAsync();
                    var batch = new List<Task>();
                    for (int i = 0; i < rate / 10; i++, n++)
                    {
                        var producer = n % 2 == 0 ? host : other;
                        batch.Add(producer.EnqueueDurableAsync(new PaymentJob(n)));
                        memory.TryEnqueue(_ => Thread.Sleep(5));
                    }

                    await Task.WhenAll(batch);
                }
            }

            return n - 1;
        });

        var page = await DashboardPage.OpenAsync(chromium.Browser, _contexts, host, output.WriteLine);
        var card = Card(page, DashboardHost.DurableQueue);
        await Expect(card.Locator("table.consumers tbody tr")).ToHaveCountAsync(2, new() { Timeout = Generous });
        await Task.Delay(shoot - TimeSpan.FromSeconds(5));
        await card.Locator("details.dead-letters summary").ClickAsync();
        await Expect(card.Locator("details.dead-letters tbody tr").First).ToBeVisibleAsync(new() { Timeout = Generous });
        await Task.Delay(TimeSpan.FromSeconds(5));

        string saved = await SaveScreenshotAsync(page, "dashboard-durable.png");
        if (Environment.GetEnvironmentVariable("WORKQUEUE_SCREENSHOT") is { Length: > 0 } path)
        {
            File.Copy(saved, path, overwrite: true);
            saved = path;
        }

        stop.Cancel();
        output.WriteLine($"Screenshot: {saved}; {await load} durable jobs enqueued in all.");
    }
}
