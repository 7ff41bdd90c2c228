using System.Net;
using System.Net.Http.Json;
using PayCallbackApi.Settlement;
using PayCallbackApi.Tests.TestSupport;
using StackExchange.Redis;
using WorkQueue.Tests.Support;

namespace PayCallbackApi.Tests.Settlement;

/// <summary>The nightly settlement summary, a recurring job: listed by the admin endpoints and run on demand in both modes.</summary>
public sealed class SettlementSummaryJobTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Theory]
    [InlineData(ProcessingMode.Queue)]
    [InlineData(ProcessingMode.Durable)]
    public async Task Trigger_WritesTheSummaryOfTheMerchantBalance(ProcessingMode mode)
    {
        await using var app = new PayCallbackApp(redis.Server, mode, new() { ["PayCallback:SettlementTimeZone"] = "Europe/Paris" });
        using var client = app.CreateClient();
        using var mux = await ConnectionMultiplexer.ConnectAsync(redis.Server.Configuration);
        var db = mux.GetDatabase();
        await db.HashSetAsync("pay:merchant:balance", [new("CNY", "199.5")]);

        var jobs = await client.GetFromJsonAsync<RecurringJobRow[]>("/admin/workqueue/recurring");
        var job = Assert.Single(jobs!);
        Assert.Equal((SettlementSummaryJob.Id, "0 2 * * *", "Europe/Paris", SampleQueues.Settlement), (job.Id, job.Schedule, job.TimeZone, job.Queue));

        using var triggered = await client.PostAsync($"/admin/workqueue/recurring/{SettlementSummaryJob.Id}/trigger", JsonContent.Create(new { }));
        Assert.Equal(HttpStatusCode.OK, triggered.StatusCode);
        string key = SettlementSummaryJob.SummaryKey(DateTimeOffset.UtcNow);
        await Wait.UntilAsync(() => db.HashGet(key, "balance:CNY") == "199.5", $"the summary in {key}");
        Assert.Equal("1", (string?)await db.HashGetAsync(key, "manual"));
    }

    private sealed record RecurringJobRow(string Id, string Schedule, string TimeZone, string Queue);
}
