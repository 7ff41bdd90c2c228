using System.Net;
using System.Net.Http.Json;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;
using PayCallbackApi;
using PayCallbackApi.PostPayment;
using PayCallbackApi.Settlement;
using PayCallbackApi.Tests.TestSupport;
using StackExchange.Redis;
using WorkQueue;
using WorkQueue.Testing;

namespace PayCallbackApi.Tests;

/// <summary>
/// WorkQueue.Testing on the sample, as an application's own tests would use it: the real app in
/// <c>WebApplicationFactory</c> against a real redis-server, a signed callback posted over HTTP, and the harness to wait for
/// the jobs it started, to see what was enqueued, to hold or inline jobs, and to move a fake clock to the nightly job.
/// These tests know the sample only by its endpoints, its queue names and its job classes.
/// </summary>
public sealed class CallbackTestingHelpersTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task Callback_WaitUntilIdle_EveryEffectIsDoneAndBothJobsWereEnqueued()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue) { ConfigureTestServices = s => s.AddWorkQueueTesting() };
        using var client = app.CreateClient();
        var harness = app.Services.GetRequiredService<IWorkQueueTestHarness>();
        string orderId = $"o-idle-{Guid.NewGuid():N}";

        using var response = await client.SendAsync(PayCallbackApp.SignedCallback(PayCallbackApp.Body(orderId, $"p-{Guid.NewGuid():N}", amount: "42.00")));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);

        // One call instead of polling the order: the post-payment job, and the provider calls it handed to the legacy
        // queue, have both run when it returns.
        await harness.WaitUntilIdleAsync();

        var order = await client.GetFromJsonAsync<PayCallbackApp.OrderView>($"/api/orders/{orderId}");
        Assert.True(order!.Effects.Values.All(done => done), $"Effects: {string.Join(", ", order.Effects)}");
        var posted = Assert.Single(harness.EnqueuedFor<PostPaymentJob>(SampleQueues.Payments));
        Assert.Equal((orderId, 42.00m, "CNY"), (posted.PayloadAs<PaidOrder>().OrderId, posted.PayloadAs<PaidOrder>().Amount, posted.PayloadAs<PaidOrder>().Currency));
        var legacy = Assert.Single(harness.EnqueuedFor<LegacyCallJob>(SampleQueues.Legacy));
        Assert.Equal(orderId, legacy.PayloadAs<PaidOrder>().OrderId);
    }

    [Fact]
    public async Task Callback_RecordMode_TheJobIsRecordedAndNothingRunsUntilRunHeld()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue)
        {
            ConfigureTestServices = s => s.AddWorkQueueTesting(o => o.Mode = WorkQueueTestMode.Record),
        };
        using var client = app.CreateClient();
        var harness = app.Services.GetRequiredService<IWorkQueueTestHarness>();
        string orderId = $"o-record-{Guid.NewGuid():N}";
        string paymentId = $"p-{Guid.NewGuid():N}";

        using var response = await client.SendAsync(PayCallbackApp.SignedCallback(PayCallbackApp.Body(orderId, paymentId)));
        await harness.WaitUntilIdleAsync();

        // Accepted (the queue took the job), and held: no effect happened, nothing reached the legacy queue.
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var job = Assert.Single(harness.Enqueued);
        Assert.Equal((SampleQueues.Payments, typeof(PostPaymentJob), WorkQueueTestMode.Record), (job.QueueName, job.HandlerType, job.Mode));
        Assert.Equal(new PaidOrder(orderId, paymentId, 99.50m, "CNY"), job.Payload);
        var order = await client.GetFromJsonAsync<PayCallbackApp.OrderView>($"/api/orders/{orderId}");
        Assert.True(order!.Effects.Values.All(done => !done), $"Effects: {string.Join(", ", order.Effects)}");

        // Then run what was held: the post-payment job, and the legacy job it held in turn.
        Assert.Equal(2, await harness.RunHeldAsync());
        order = await client.GetFromJsonAsync<PayCallbackApp.OrderView>($"/api/orders/{orderId}");
        Assert.True(order!.Effects.Values.All(done => done), $"Effects: {string.Join(", ", order.Effects)}");
        Assert.Equal([typeof(PostPaymentJob), typeof(LegacyCallJob)], harness.Enqueued.Select(j => j.HandlerType));
    }

    [Fact]
    public async Task Callback_InlineMode_EveryEffectIsDoneWhenTheResponseArrives()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue)
        {
            ConfigureTestServices = s => s.AddWorkQueueTesting(o => o.Mode = WorkQueueTestMode.Inline),
        };
        using var client = app.CreateClient();
        string orderId = $"o-inline-{Guid.NewGuid():N}";

        using var response = await client.SendAsync(PayCallbackApp.SignedCallback(PayCallbackApp.Body(orderId, $"p-{Guid.NewGuid():N}")));

        // Both jobs ran inside the request, the second inside the first: no wait at all.
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var order = await client.GetFromJsonAsync<PayCallbackApp.OrderView>($"/api/orders/{orderId}");
        Assert.True(order!.Effects.Values.All(done => done), $"Effects: {string.Join(", ", order.Effects)}");
        var harness = app.Services.GetRequiredService<IWorkQueueTestHarness>();
        Assert.Equal([typeof(PostPaymentJob), typeof(LegacyCallJob)], harness.Enqueued.Select(j => j.HandlerType));
    }

    [Fact]
    public async Task DurableMode_Callback_WaitUntilIdle_EveryEffectIsDone()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Durable) { ConfigureTestServices = s => s.AddWorkQueueTesting() };
        using var client = app.CreateClient();
        string orderId = $"o-durable-{Guid.NewGuid():N}";

        using var response = await client.SendAsync(PayCallbackApp.SignedCallback(PayCallbackApp.Body(orderId, $"p-{Guid.NewGuid():N}")));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);

        // The jobs are in Redis Streams: the wait reads the queues' figures from Redis until both are empty.
        var harness = app.Services.GetRequiredService<IWorkQueueTestHarness>();
        await harness.WaitUntilIdleAsync();

        var order = await client.GetFromJsonAsync<PayCallbackApp.OrderView>($"/api/orders/{orderId}");
        Assert.True(order!.Effects.Values.All(done => done), $"Effects: {string.Join(", ", order.Effects)}");

        // The same producer code as in Queue mode (IWorkQueue), so the same jobs are recorded.
        var posted = Assert.Single(harness.EnqueuedFor<PostPaymentJob>(SampleQueues.Payments));
        Assert.Equal(orderId, posted.PayloadAs<PaidOrder>().OrderId);
        Assert.Single(harness.EnqueuedFor<LegacyCallJob>(SampleQueues.Legacy));
    }

    [Fact]
    public async Task NightlySettlement_FakeClockAdvancedPastTwo_TheSummaryIsWrittenWhenTheCallReturns()
    {
        // Queue mode's settlement summary is a recurring job on the in-memory settlement queue, at 02:00 UTC here.
        var clock = new FakeTimeProvider(new DateTimeOffset(2031, 3, 4, 1, 59, 0, TimeSpan.Zero));
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue, new() { ["PayCallback:SettlementTimeZone"] = "UTC" })
        {
            ConfigureTestServices = s => s.AddWorkQueueTesting(o => o.FakeTime = clock),
        };
        using var client = app.CreateClient();
        var harness = app.Services.GetRequiredService<IWorkQueueTestHarness>();
        using var response = await client.SendAsync(PayCallbackApp.SignedCallback(PayCallbackApp.Body($"o-night-{Guid.NewGuid():N}", $"p-{Guid.NewGuid():N}", amount: "10.00")));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        await harness.WaitUntilIdleAsync();
        using var mux = await ConnectionMultiplexer.ConnectAsync(redis.Server.Configuration);
        string key = SettlementSummaryJob.SummaryKey(clock.GetUtcNow());
        string? balance = await mux.GetDatabase().HashGetAsync("pay:merchant:balance", "CNY");

        await harness.AdvanceTimeAsync(TimeSpan.FromSeconds(59));
        Assert.False(await mux.GetDatabase().KeyExistsAsync(key), "The summary was written before 02:00.");

        await harness.AdvanceTimeAsync(TimeSpan.FromSeconds(1));
        var summary = (await mux.GetDatabase().HashGetAllAsync(key)).ToDictionary(e => (string)e.Name!, e => (string?)e.Value);
        Assert.Equal((balance, "2031-03-04T02:00:00.0000000+00:00", "0"), (summary["balance:CNY"], summary["occurrence"], summary["manual"]));
    }
}
