using PayCallbackApi.Orders;

namespace PayCallbackApi.PostPayment;

/// <summary>
/// The post-payment work, written once and used by every mode, so that the modes differ only in how the work is
/// dispatched. Every step is synchronous (as the original service's were) and idempotent: each effect is recorded once,
/// in the same Redis script as the write it stands for, or, for the legacy providers, right after the call.
/// </summary>
public sealed class PostPaymentSteps(OrderStore orders, LegacyProviders providers)
{
    /// <summary>Settlement (merchant balance) and the payment message, in one Redis round trip, each at most once.</summary>
    public void SettleAndPublish(PaidOrder order) => orders.SettleAndPublish(order);

    /// <summary>
    /// One blocking legacy provider call, skipped when its effect is already recorded. A call that ran but was not
    /// recorded (the process died in between, or the recording failed) runs again: at least once, counted as a repeat.
    /// </summary>
    public void CallProvider(PaidOrder order, LegacyStep step)
    {
        string effect = step == LegacyStep.Sms ? "sms" : "delivery";
        if (orders.BeginProviderCall(order.OrderId, effect) == ProviderCall.AlreadyDone)
        {
            return;
        }

        if (step == LegacyStep.Sms)
        {
            providers.SendSms(order);
        }
        else
        {
            providers.RequestDelivery(order);
        }

        orders.MarkEffect(order.OrderId, effect);
    }
}

/// <summary>The legacy provider calls.</summary>
public enum LegacyStep
{
    /// <summary>The payment SMS.</summary>
    Sms,

    /// <summary>The delivery request.</summary>
    Delivery,
}

/// <summary>The payload of a <c>legacy</c> job: one provider call for one order.</summary>
public sealed record LegacyCall(PaidOrder Order, LegacyStep Step);
