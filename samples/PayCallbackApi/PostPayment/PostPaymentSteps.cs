using PayCallbackApi.Orders;

namespace PayCallbackApi.PostPayment;

/// <summary>
/// The post-payment work, written once and used by both modes, so that the modes differ only in how the work is
/// dispatched. Every step is synchronous (as the original service's were) and idempotent: it records its completion
/// in Redis only on the first success.
/// </summary>
public sealed class PostPaymentSteps(OrderStore orders, LegacyProviders providers)
{
    public void LoadOrderDetails(PaidOrder order)
    {
        if (orders.LoadOrder(order.OrderId).Length == 0)
        {
            throw new InvalidOperationException($"Order {order.OrderId} vanished before its post-payment work ran.");
        }
    }

    public void Settle(PaidOrder order)
    {
        orders.AddToMerchantBalance(order);
        orders.MarkEffect(order.OrderId, "settlement");
    }

    public void PublishMessage(PaidOrder order)
    {
        orders.PublishPayment(order);
        orders.MarkEffect(order.OrderId, "message");
    }

    public void SendSms(PaidOrder order)
    {
        providers.SendSms(order);
        orders.MarkEffect(order.OrderId, "sms");
    }

    public void RequestDelivery(PaidOrder order)
    {
        providers.RequestDelivery(order);
        orders.MarkEffect(order.OrderId, "delivery");
    }
}
