using PayCallbackApi.Callbacks;

namespace PayCallbackApi.PostPayment;

/// <summary>The payload of the post-payment jobs.</summary>
public sealed record PaidOrder(string OrderId, string PaymentId, decimal Amount, string Currency)
{
    public static PaidOrder From(PaymentCallback callback) => new(callback.OrderId, callback.PaymentId, callback.Amount, callback.Currency);
}
