using System.Runtime.ExceptionServices;
using PayCallbackApi.Orders;

namespace PayCallbackApi.PostPayment;

/// <summary>
/// The post-payment work, written once and used by every mode, so that the modes differ only in how the work is
/// dispatched. Every step is synchronous (as the original service's were) and idempotent: each effect is recorded once,
/// in the same Redis script as the write it stands for, or, for the legacy providers, right after the call.
/// </summary>
public sealed class PostPaymentSteps(OrderStore orders, ILegacyProviders providers)
{
    private static readonly LegacyStep[] Steps = [LegacyStep.Sms, LegacyStep.Delivery];

    /// <summary>Settlement (merchant balance) and the payment message, in one Redis round trip, each at most once.</summary>
    public void SettleAndPublish(PaidOrder order) => orders.SettleAndPublish(order);

    /// <summary>
    /// One blocking legacy provider call, skipped when its effect is already recorded. A call that ran but was not
    /// recorded (the process died in between, or the recording failed) runs again: at least once, counted as a repeat.
    /// </summary>
    public void CallProvider(PaidOrder order, LegacyStep step)
    {
        string effect = Effect(step);
        if (orders.BeginProviderCall(order.OrderId, effect) == ProviderCall.AlreadyDone)
        {
            return;
        }

        Call(order, step);
        orders.MarkEffect(order.OrderId, effect);
    }

    /// <summary>
    /// Both blocking legacy provider calls of one order, SMS then delivery, each skipped when its effect is already
    /// recorded, in three Redis round trips instead of four: the SMS's record travels with the delivery's check. A call
    /// that throws is not recorded; the other is still made, and the failure is rethrown afterwards so that the job's
    /// retry makes only the call that failed.
    /// </summary>
    public void CallProviders(PaidOrder order)
    {
        List<ExceptionDispatchInfo>? failures = null;
        string? returned = null;
        foreach (var step in Steps)
        {
            string effect = Effect(step);
            var call = orders.BeginProviderCall(order.OrderId, effect, returned);
            returned = null;
            if (call == ProviderCall.AlreadyDone)
            {
                continue;
            }

            try
            {
                Call(order, step);
                returned = effect;
            }
            catch (Exception ex)
            {
                (failures ??= []).Add(ExceptionDispatchInfo.Capture(ex));
            }
        }

        if (returned is not null)
        {
            orders.MarkEffect(order.OrderId, returned);
        }

        if (failures is [var only])
        {
            only.Throw();
        }

        if (failures is not null)
        {
            throw new AggregateException(failures.Select(f => f.SourceException));
        }
    }

    private static string Effect(LegacyStep step) => step == LegacyStep.Sms ? "sms" : "delivery";

    private void Call(PaidOrder order, LegacyStep step)
    {
        if (step == LegacyStep.Sms)
        {
            providers.SendSms(order);
        }
        else
        {
            providers.RequestDelivery(order);
        }
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

