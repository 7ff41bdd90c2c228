using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using PayCallbackApi.Orders;
using PayCallbackApi.PostPayment;
using PayCallbackApi.Tests.TestSupport;

namespace PayCallbackApi.Tests.Callbacks;

/// <summary>The callback contract, end to end, in both modes: they must differ in behaviour under load, not in results.</summary>
public sealed class CallbackEndpointTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Theory]
    [InlineData(ProcessingMode.Queue)]
    [InlineData(ProcessingMode.Naive)]
    [InlineData(ProcessingMode.Durable)]
    public async Task ValidCallback_AnsweredSuccessAndEveryEffectEventuallyDone(ProcessingMode mode)
    {
        await using var app = new PayCallbackApp(redis.Server, mode);
        using var client = app.CreateClient();
        string orderId = $"o-{mode}-{Guid.NewGuid():N}";
        var dispatcher = app.Services.GetRequiredService<IPostPaymentDispatcher>();
        Assert.IsType(mode == ProcessingMode.Naive ? typeof(NaiveDispatcher) : typeof(QueueDispatcher), dispatcher);

        using var response = await client.SendAsync(PayCallbackApp.SignedCallback(PayCallbackApp.Body(orderId, $"p-{Guid.NewGuid():N}")));

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("""{"code":"SUCCESS"}""", await response.Content.ReadAsStringAsync());
        await app.WaitForEffectsAsync(client, orderId);
        var order = await client.GetFromJsonAsync<PayCallbackApp.OrderView>($"/api/orders/{orderId}");
        Assert.Equal("Paid", order!.Status);
        Assert.Equal(["delivery", "message", "settlement", "sms"], order.Effects.Keys.Order());
    }

    // One dispatcher for Queue and Durable mode, its claim chosen from the queues' store (QueueDispatcher): in Redis
    // Streams the claim is pending ('p') until the job is stored, then final ('d'); in memory it is final at once, in
    // one script (it holds the order id), with no second Redis call.
    [Theory]
    [InlineData(ProcessingMode.Queue, "order")]
    [InlineData(ProcessingMode.Durable, "d")]
    public async Task AcceptedCallback_ClaimFollowsTheQueuesStore(ProcessingMode mode, string claim)
    {
        await using var app = new PayCallbackApp(redis.Server, mode);
        using var client = app.CreateClient();
        string orderId = $"o-claim-{mode}-{Guid.NewGuid():N}", paymentId = $"p-{Guid.NewGuid():N}";

        using var response = await client.SendAsync(PayCallbackApp.SignedCallback(PayCallbackApp.Body(orderId, paymentId)));

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using var mux = await StackExchange.Redis.ConnectionMultiplexer.ConnectAsync(redis.Server.Configuration);
        Assert.Equal(claim == "order" ? orderId : claim, (string?)await mux.GetDatabase().StringGetAsync($"pay:payment:{paymentId}"));
        await app.WaitForEffectsAsync(client, orderId);
    }

    [Theory]
    [InlineData(ProcessingMode.Queue)]
    [InlineData(ProcessingMode.Naive)]
    [InlineData(ProcessingMode.Durable)]
    public async Task DuplicateCallbacks_Sequential_SideEffectsHappenOnce(ProcessingMode mode)
    {
        await using var app = new PayCallbackApp(redis.Server, mode);
        using var client = app.CreateClient();
        string orderId = $"o-dup-{mode}-{Guid.NewGuid():N}";
        string body = PayCallbackApp.Body(orderId, $"p-{Guid.NewGuid():N}");
        long acceptedBefore = await app.CounterAsync(OrderStore.StatsAccepted);
        long smsBefore = await app.CounterAsync(OrderStore.EffectCounter("sms"));

        using (var first = await client.SendAsync(PayCallbackApp.SignedCallback(body)))
        {
            Assert.Equal(HttpStatusCode.OK, first.StatusCode);
        }

        using (var again = await client.SendAsync(PayCallbackApp.SignedCallback(body)))
        {
            Assert.Equal(HttpStatusCode.OK, again.StatusCode);
        }

        for (int i = 0; i < 5; i++)
        {
            using var duplicate = await client.SendAsync(PayCallbackApp.SignedCallback(body));
            Assert.Equal(HttpStatusCode.OK, duplicate.StatusCode);
        }

        await app.WaitForEffectsAsync(client, orderId);

        Assert.Equal(acceptedBefore + 1, await app.CounterAsync(OrderStore.StatsAccepted));
        Assert.Equal(smsBefore + 1, await app.CounterAsync(OrderStore.EffectCounter("sms")));
    }

    // Queue mode only: Naive mode's synchronous Redis call on request threads starves the thread pool that
    // StackExchange.Redis 1.2.6 reads replies on, so a concurrent burst there ends in RedisTimeoutExceptions (seen at
    // 20 concurrent requests on 2 cores). That failure under load is what the load comparison shows; these tests check
    // results at low load.
    [Fact]
    public async Task ConcurrentFirstCallbacks_SamePayment_OnlyOneRoundOfEffects()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue);
        using var client = app.CreateClient();
        string orderId = $"o-race-{Guid.NewGuid():N}";
        string body = PayCallbackApp.Body(orderId, $"p-{Guid.NewGuid():N}");
        long deliveriesBefore = await app.CounterAsync(OrderStore.EffectCounter("delivery"));

        var responses = await Task.WhenAll(Enumerable.Range(0, 32).Select(_ => client.SendAsync(PayCallbackApp.SignedCallback(body))));

        Assert.All(responses, r => Assert.Equal(HttpStatusCode.OK, r.StatusCode));
        await app.WaitForEffectsAsync(client, orderId);
        Assert.Equal(deliveriesBefore + 1, await app.CounterAsync(OrderStore.EffectCounter("delivery")));
    }

    // Durable mode: concurrent first callbacks meet a pending claim; each is answered 200 (the one that stored the job,
    // or a duplicate after its commit) or 503 with Retry-After (the claim was still pending): never two jobs.
    [Fact]
    public async Task ConcurrentFirstCallbacks_SamePayment_Durable_OneJobOthersDuplicateOrRetryLater()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Durable);
        using var client = app.CreateClient();
        string orderId = $"o-race-durable-{Guid.NewGuid():N}";
        string body = PayCallbackApp.Body(orderId, $"p-{Guid.NewGuid():N}");
        long acceptedBefore = await app.CounterAsync(OrderStore.StatsAccepted);

        var responses = await Task.WhenAll(Enumerable.Range(0, 32).Select(_ => client.SendAsync(PayCallbackApp.SignedCallback(body))));

        Assert.Contains(responses, r => r.StatusCode == HttpStatusCode.OK);
        Assert.All(responses, r => Assert.True(
            r.StatusCode == HttpStatusCode.OK || (r.StatusCode == HttpStatusCode.ServiceUnavailable && r.Headers.RetryAfter is not null),
            $"{r.StatusCode} (Retry-After {r.Headers.RetryAfter})"));
        await app.WaitForEffectsAsync(client, orderId);
        Assert.Equal(acceptedBefore + 1, await app.CounterAsync(OrderStore.StatsAccepted));
        Assert.Equal(1, await app.CounterAsync($"pay:order:{orderId}", "sms:calls"));
        Assert.Equal(1, await app.CounterAsync($"pay:order:{orderId}", "delivery:calls"));
    }

    // Durable mode, queue full and rejecting (nothing consumes it, room for one job): the second callback is answered
    // 503 with Retry-After, nothing is counted, and its claim is released, so the gateway's retry is processed as new.
    [Fact]
    public async Task DurableQueueFull_Answers503AndReleasesTheClaim()
    {
        string prefix = $"t-{Guid.NewGuid():N}";
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Durable, new()
        {
            ["WorkQueue:Queues:payments:Capacity"] = "1",
            ["WorkQueue:Queues:payments:Durable:Consume"] = "false",
            ["WorkQueue:Queues:payments:Durable:KeyPrefix"] = prefix,
            ["WorkQueue:Queues:legacy:Durable:KeyPrefix"] = prefix,
        });
        using var client = app.CreateClient();
        string first = PayCallbackApp.Body($"o-full-1-{prefix}", $"p-full-1-{prefix}");
        string secondPayment = $"p-full-2-{prefix}";
        string second = PayCallbackApp.Body($"o-full-2-{prefix}", secondPayment);
        long acceptedBefore = await app.CounterAsync(OrderStore.StatsAccepted);

        using var accepted = await client.SendAsync(PayCallbackApp.SignedCallback(first));
        using var refused = await client.SendAsync(PayCallbackApp.SignedCallback(second));
        using var retried = await client.SendAsync(PayCallbackApp.SignedCallback(second));

        Assert.Equal(HttpStatusCode.OK, accepted.StatusCode);
        Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
        Assert.NotNull(refused.Headers.RetryAfter);
        Assert.Equal(HttpStatusCode.ServiceUnavailable, retried.StatusCode);   // released, claimed again, refused again
        Assert.Equal(acceptedBefore + 1, await app.CounterAsync(OrderStore.StatsAccepted));
        Assert.Equal(0, await app.CounterAsync($"pay:payment:{secondPayment}"));
    }

    [Theory]
    [InlineData(null)]
    [InlineData("sha256=0000000000000000000000000000000000000000000000000000000000000000")]
    [InlineData("sha256=zz")]
    [InlineData("md5=abc")]
    public async Task BadOrMissingSignature_Returns401AndChangesNothing(string? signature)
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue);
        using var client = app.CreateClient();
        string orderId = $"o-sig-{Guid.NewGuid():N}";
        using var request = PayCallbackApp.SignedCallback(PayCallbackApp.Body(orderId, $"p-{Guid.NewGuid():N}"));
        request.Headers.Remove("X-Signature");
        if (signature is not null)
        {
            request.Headers.Add("X-Signature", signature);
        }

        using var response = await client.SendAsync(request);

        Assert.Equal(HttpStatusCode.Unauthorized, response.StatusCode);
        using var missing = await client.GetAsync($"/api/orders/{orderId}");
        Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode);
    }

    [Theory]
    [InlineData("""{"orderId":"o-1","paymentId":""", "body")]
    [InlineData("""[1,2]""", "body")]
    [InlineData("""{"paymentId":"p","amount":1,"currency":"CNY","status":"SUCCESS","paidAt":"2026-11-21T10:00:00Z"}""", "orderId")]
    [InlineData("""{"orderId":"o","amount":1,"currency":"CNY","status":"SUCCESS","paidAt":"2026-11-21T10:00:00Z"}""", "paymentId")]
    [InlineData("""{"orderId":"o","paymentId":"p","currency":"CNY","status":"SUCCESS","paidAt":"2026-11-21T10:00:00Z"}""", "amount")]
    [InlineData("""{"orderId":"o","paymentId":"p","amount":0,"currency":"CNY","status":"SUCCESS","paidAt":"2026-11-21T10:00:00Z"}""", "amount")]
    [InlineData("""{"orderId":"o","paymentId":"p","amount":-5.5,"currency":"CNY","status":"SUCCESS","paidAt":"2026-11-21T10:00:00Z"}""", "amount")]
    [InlineData("""{"orderId":"o","paymentId":"p","amount":"10","currency":"CNY","status":"SUCCESS","paidAt":"2026-11-21T10:00:00Z"}""", "amount")]
    [InlineData("""{"orderId":"o","paymentId":"p","amount":1,"status":"SUCCESS","paidAt":"2026-11-21T10:00:00Z"}""", "currency")]
    [InlineData("""{"orderId":"o","paymentId":"p","amount":1,"currency":"CNY","status":"WEIRD","paidAt":"2026-11-21T10:00:00Z"}""", "status")]
    [InlineData("""{"orderId":"o","paymentId":"p","amount":1,"currency":"CNY","paidAt":"2026-11-21T10:00:00Z"}""", "status")]
    [InlineData("""{"orderId":"o","paymentId":"p","amount":1,"currency":"CNY","status":"SUCCESS","paidAt":"yesterday"}""", "paidAt")]
    public async Task InvalidBody_Returns400ProblemNamingTheField(string body, string field)
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue);
        using var client = app.CreateClient();

        using var response = await client.SendAsync(PayCallbackApp.SignedCallback(body));

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.True(json.RootElement.GetProperty("errors").TryGetProperty(field, out _), $"errors should name '{field}': {json.RootElement}");
    }

    [Fact]
    public async Task QueueFullInRejectMode_Returns503WithRetryAfterAndTheRetryIsProcessedLater()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue, new() { ["WorkQueue:Queues:payments:Capacity"] = "1" });
        using var client = app.CreateClient();
        using (var pause = await client.PostAsync("/admin/workqueue/payments/pause", JsonContent.Create(new { })))
        {
            Assert.Equal(HttpStatusCode.OK, pause.StatusCode);
        }

        string firstOrder = $"o-full-a-{Guid.NewGuid():N}", secondOrder = $"o-full-b-{Guid.NewGuid():N}";
        string secondBody = PayCallbackApp.Body(secondOrder, $"p-{Guid.NewGuid():N}");
        using (var accepted = await client.SendAsync(PayCallbackApp.SignedCallback(PayCallbackApp.Body(firstOrder, $"p-{Guid.NewGuid():N}"))))
        {
            Assert.Equal(HttpStatusCode.OK, accepted.StatusCode);
        }

        using (var rejected = await client.SendAsync(PayCallbackApp.SignedCallback(secondBody)))
        {
            Assert.Equal(HttpStatusCode.ServiceUnavailable, rejected.StatusCode);
            Assert.Equal(TimeSpan.FromSeconds(1), rejected.Headers.RetryAfter?.Delta);
            Assert.Equal("application/problem+json", rejected.Content.Headers.ContentType?.MediaType);
        }

        // The rejected payment was released, so the order does not exist and the gateway's retry is new, not a duplicate.
        using (var released = await client.GetAsync($"/api/orders/{secondOrder}"))
        {
            Assert.Equal(HttpStatusCode.NotFound, released.StatusCode);
        }

        using (var resume = await client.PostAsync("/admin/workqueue/payments/resume", JsonContent.Create(new { })))
        {
            Assert.Equal(HttpStatusCode.OK, resume.StatusCode);
        }

        await app.WaitForEffectsAsync(client, firstOrder);
        using (var retried = await client.SendAsync(PayCallbackApp.SignedCallback(secondBody)))
        {
            Assert.Equal(HttpStatusCode.OK, retried.StatusCode);
        }

        await app.WaitForEffectsAsync(client, secondOrder);
    }

    [Fact]
    public async Task FailedStatus_RecordedWithoutSideEffects()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue);
        using var client = app.CreateClient();
        string orderId = $"o-failed-{Guid.NewGuid():N}";

        using var response = await client.SendAsync(PayCallbackApp.SignedCallback(PayCallbackApp.Body(orderId, $"p-{Guid.NewGuid():N}", status: "FAILED")));

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var order = await client.GetFromJsonAsync<PayCallbackApp.OrderView>($"/api/orders/{orderId}");
        Assert.Equal("Failed", order!.Status);
        Assert.All(order.Effects.Values, Assert.False);
    }

    [Fact]
    public async Task BareMode_ClaimsAndAnswers_WithNoPostPaymentWork()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Bare);
        using var client = app.CreateClient();
        Assert.IsType<BareDispatcher>(app.Services.GetRequiredService<IPostPaymentDispatcher>());
        string orderId = $"o-bare-{Guid.NewGuid():N}";
        long acceptedBefore = await app.CounterAsync(OrderStore.StatsAccepted);

        using var response = await client.SendAsync(PayCallbackApp.SignedCallback(PayCallbackApp.Body(orderId, $"p-{Guid.NewGuid():N}")));

        // Answered like Queue mode, claimed once, and nothing handed to any queue (the dispatch happens before the answer).
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(acceptedBefore + 1, await app.CounterAsync(OrderStore.StatsAccepted));
        var queues = app.Services.GetRequiredService<WorkQueue.IWorkQueueProvider>().Queues;
        Assert.NotEmpty(queues);
        Assert.All(queues, q => Assert.Equal(0, q.GetSnapshot().Totals.Enqueued));
        var order = await client.GetFromJsonAsync<PayCallbackApp.OrderView>($"/api/orders/{orderId}");
        Assert.Equal("Paid", order!.Status);
        Assert.All(order.Effects.Values, Assert.False);
    }
}
