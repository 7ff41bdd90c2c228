using System.Net;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using PayCallbackApi.Orders;
using PayCallbackApi.PostPayment;
using PayCallbackApi.Tests.TestSupport;

namespace PayCallbackApi.Tests.PostPayment;

/// <summary>
/// The <c>legacy</c> job (<c>PostPayment/Jobs.cs</c>, <see cref="PostPaymentSteps.CallProviders"/>): one job makes both
/// provider calls, and a call that fails neither stops the other nor makes it run twice.
/// </summary>
public sealed class LegacyCallJobTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Theory]
    [InlineData(ProcessingMode.Queue)]
    [InlineData(ProcessingMode.Durable)]
    public async Task SmsFailsOnce_DeliveryMadeOnce_RetryMakesOnlyTheSms(ProcessingMode mode)
    {
        var providers = new FlakySms(failures: 1);
        await using var app = new PayCallbackApp(redis.Server, mode)
        {
            ConfigureTestServices = services => services.Replace(ServiceDescriptor.Singleton<ILegacyProviders>(providers)),
        };
        using var client = app.CreateClient();
        string orderId = $"o-flaky-{mode}-{Guid.NewGuid():N}";
        long smsRepeats = await app.CounterAsync(OrderStore.RepeatCounter("sms"));
        long deliveryRepeats = await app.CounterAsync(OrderStore.RepeatCounter("delivery"));

        using (var response = await client.SendAsync(PayCallbackApp.SignedCallback(PayCallbackApp.Body(orderId, $"p-{Guid.NewGuid():N}"))))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }

        await app.WaitForEffectsAsync(client, orderId);
        // The delivery is made in the attempt whose SMS failed, and the retry makes only the SMS.
        Assert.Equal(["sms", "delivery", "sms"], providers.Calls(orderId));
        Assert.Equal(smsRepeats + 1, await app.CounterAsync(OrderStore.RepeatCounter("sms")));
        Assert.Equal(deliveryRepeats, await app.CounterAsync(OrderStore.RepeatCounter("delivery")));
    }

    /// <summary>SMS calls that throw the first <c>failures</c> times per order; counts every call.</summary>
    private sealed class FlakySms(int failures) : ILegacyProviders
    {
        private readonly Dictionary<string, List<string>> _calls = [];

        public string[] Calls(string orderId)
        {
            lock (_calls)
            {
                return _calls.TryGetValue(orderId, out var calls) ? [.. calls] : [];
            }
        }

        public void SendSms(PaidOrder order)
        {
            if (Record(order, "sms") <= failures)
            {
                throw new InvalidOperationException($"SMS gateway down (order {order.OrderId}).");
            }
        }

        public void RequestDelivery(PaidOrder order) => Record(order, "delivery");

        /// <summary>Records a call; returns how many calls of that kind the order has had.</summary>
        private int Record(PaidOrder order, string call)
        {
            lock (_calls)
            {
                if (!_calls.TryGetValue(order.OrderId, out var calls))
                {
                    _calls[order.OrderId] = calls = [];
                }

                calls.Add(call);
                return calls.Count(c => c == call);
            }
        }
    }
}
