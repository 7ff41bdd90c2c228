using System.Net;
using System.Text.Json;
using PayCallbackApi.Orders;
using PayCallbackApi.PostPayment;
using PayCallbackApi.Tests.TestSupport;
using StackExchange.Redis;

namespace PayCallbackApi.Tests.Orders;

/// <summary>What the order store writes: the payment message, and a second payment for a paid order.</summary>
public sealed class OrderStoreTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public void PaymentMessage_IdsWithQuotes_StayOneFieldEach()
    {
        string message = OrderStore.PaymentMessage(new PaidOrder("o\",\"amount\":1000000,\"y\":\"", "p\\\"", 99.5m, "CNY"));
        using var json = JsonDocument.Parse(message);
        var names = json.RootElement.EnumerateObject().Select(p => p.Name).ToArray();
        Assert.Equal(["orderId", "paymentId", "amount"], names);
        Assert.Equal(99.5m, json.RootElement.GetProperty("amount").GetDecimal());
        Assert.Equal("o\",\"amount\":1000000,\"y\":\"", json.RootElement.GetProperty("orderId").GetString());
    }

    [Theory]
    [InlineData(ProcessingMode.Queue)]
    [InlineData(ProcessingMode.Durable)]
    [InlineData(ProcessingMode.Naive)]
    public async Task SecondPaymentForAPaidOrder_RecordedForARefund_NothingShipsTwice(ProcessingMode mode)
    {
        await using var app = new PayCallbackApp(redis.Server, mode);
        using var client = app.CreateClient();
        string orderId = $"o-twice-{mode}-{Guid.NewGuid():N}";
        using var mux = await ConnectionMultiplexer.ConnectAsync(redis.Server.Configuration);
        var db = mux.GetDatabase();

        using (var first = await client.SendAsync(PayCallbackApp.SignedCallback(PayCallbackApp.Body(orderId, $"p1-{Guid.NewGuid():N}"))))
        {
            Assert.Equal(HttpStatusCode.OK, first.StatusCode);
        }

        await app.WaitForEffectsAsync(client, orderId);
        long deliveries = await app.CounterAsync(OrderStore.EffectCounter("delivery"));
        long sms = await app.CounterAsync(OrderStore.EffectCounter("sms"));
        long duplicateCharges = await app.CounterAsync("pay:stats:duplicate-charges");

        // The second payment, and the gateway retrying it: answered 200 (the callback is valid), recorded once.
        string second = PayCallbackApp.Body(orderId, $"p2-{Guid.NewGuid():N}", amount: "99.50");
        for (int i = 0; i < 3; i++)
        {
            using var response = await client.SendAsync(PayCallbackApp.SignedCallback(second));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }

        Assert.Equal(duplicateCharges + 1, await app.CounterAsync("pay:stats:duplicate-charges"));
        Assert.Equal("1", (string?)await db.HashGetAsync($"pay:order:{orderId}", "duplicateCharges"));
        var recorded = (await db.ListRangeAsync("pay:duplicate-charges")).Select(v => JsonDocument.Parse((string)v!)).ToArray();
        Assert.Single(recorded, r => r.RootElement.GetProperty("orderId").GetString() == orderId);

        // The order still reads as the first payment left it, every effect done; none ran again.
        await app.WaitForEffectsAsync(client, orderId);
        Assert.Equal(deliveries, await app.CounterAsync(OrderStore.EffectCounter("delivery")));
        Assert.Equal(sms, await app.CounterAsync(OrderStore.EffectCounter("sms")));
    }
}
