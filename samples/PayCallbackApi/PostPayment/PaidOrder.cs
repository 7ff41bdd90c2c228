namespace PayCallbackApi.PostPayment;

/// <summary>The payload of the post-payment jobs.</summary>
public sealed record PaidOrder(string OrderId, string PaymentId, decimal Amount, string Currency);
