using System.Net;
using System.Text;
using System.Text.Json;
using PayCallbackApi.Tests.TestSupport;

namespace PayCallbackApi.Tests.Callbacks;

/// <summary>Hostile callback bodies (signed, so they pass the signature check): each is refused naming the field, and changes nothing.</summary>
public sealed class CallbackInputTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Theory]
    [InlineData("orderId", "o-1\",\"amount\":1000000,\"y\":\"")]
    [InlineData("orderId", "o-1\r\n[Critical] forged log line")]
    [InlineData("paymentId", "p-1\nsecond line")]
    [InlineData("orderId", "o 1")]
    [InlineData("paymentId", "p-\u0000")]
    public async Task Id_WithCharactersOutsideTheIdSet_Answers400NamingIt(string field, string value)
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue);
        using var client = app.CreateClient();
        string body = JsonSerializer.Serialize(new Dictionary<string, object>
        {
            ["orderId"] = field == "orderId" ? value : "o-ok",
            ["paymentId"] = field == "paymentId" ? value : "p-ok",
            ["amount"] = 99.5m,
            ["currency"] = "CNY",
            ["status"] = "SUCCESS",
            ["paidAt"] = "2026-11-21T10:00:00Z",
        });

        using var response = await client.SendAsync(PayCallbackApp.SignedCallback(body));

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.True(json.RootElement.GetProperty("errors").TryGetProperty(field, out _), json.RootElement.GetRawText());
    }

    [Theory]
    [InlineData("amount", """{"orderId":"o-dk","paymentId":"p-dk","amount":1,"currency":"CNY","status":"SUCCESS","paidAt":"2026-11-21T10:00:00Z","amount":1000000}""")]
    [InlineData("orderId", """{"orderId":"o-a","orderId":"o-b","paymentId":"p-dk2","amount":1,"currency":"CNY","status":"SUCCESS","paidAt":"2026-11-21T10:00:00Z"}""")]
    public async Task DuplicateKey_Answers400NamingIt_AndNothingIsClaimed(string key, string body)
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue);
        using var client = app.CreateClient();
        long before = await app.CounterAsync(PayCallbackApi.Orders.OrderStore.StatsAccepted);

        using var response = await client.SendAsync(PayCallbackApp.SignedCallback(body));

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        string text = await response.Content.ReadAsStringAsync();
        using var json = JsonDocument.Parse(text);
        Assert.True(json.RootElement.GetProperty("errors").TryGetProperty(key, out _), text);
        Assert.Contains("more than once", text, StringComparison.Ordinal);
        Assert.Equal(before, await app.CounterAsync(PayCallbackApi.Orders.OrderStore.StatsAccepted));
    }

    [Fact]
    public async Task GetOrder_DoesNotShowThePaymentId()
    {
        await using var app = new PayCallbackApp(redis.Server, ProcessingMode.Queue);
        using var client = app.CreateClient();
        string orderId = $"o-view-{Guid.NewGuid():N}";
        string paymentId = $"p-secret-{Guid.NewGuid():N}";
        using var paid = await client.SendAsync(PayCallbackApp.SignedCallback(PayCallbackApp.Body(orderId, paymentId)));
        Assert.Equal(HttpStatusCode.OK, paid.StatusCode);

        string view = await client.GetStringAsync($"/api/orders/{orderId}");
        Assert.Contains("\"status\":\"Paid\"", view, StringComparison.Ordinal);
        Assert.DoesNotContain(paymentId, view, StringComparison.Ordinal);
        Assert.DoesNotContain("paymentId", view, StringComparison.Ordinal);
    }
}
