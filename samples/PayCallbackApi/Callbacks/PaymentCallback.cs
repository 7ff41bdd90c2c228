namespace PayCallbackApi.Callbacks;

/// <summary>A validated payment notification.</summary>
public sealed record PaymentCallback(string OrderId, string PaymentId, decimal Amount, string Currency, PaymentStatus Status, DateTimeOffset PaidAt);

/// <summary>The statuses a gateway sends.</summary>
public enum PaymentStatus
{
    Success,
    Failed,
    Closed,
}
