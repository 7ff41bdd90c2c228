using PayCallbackApi.Callbacks;
using PayCallbackApi.Orders;

namespace PayCallbackApi.PostPayment;

/// <summary>
/// The "before" picture, kept honest: a synchronous Redis claim on the request thread, then each step fired onto the
/// shared CLR thread pool with <c>Task.Run</c>, as the original service fired an <c>Action</c> per step. Nothing bounds
/// it and nothing retries it.
/// </summary>
public sealed partial class NaiveDispatcher(OrderStore orders, PostPaymentSteps steps, ILogger<NaiveDispatcher> logger) : IPostPaymentDispatcher
{
    public ValueTask<Acceptance> AcceptAsync(PaymentCallback callback)
    {
        if (orders.Claim(callback) != ClaimResult.New || callback.Status != PaymentStatus.Success)
        {
            return new(Acceptance.Duplicate);
        }

        var order = PaidOrder.From(callback);
        Fire(nameof(steps.SettleAndPublish), () => steps.SettleAndPublish(order), order);
        Fire("SendSms", () => steps.CallProvider(order, LegacyStep.Sms), order);
        Fire("RequestDelivery", () => steps.CallProvider(order, LegacyStep.Delivery), order);
        return new(Acceptance.Accepted);
    }

    private void Fire(string step, Action action, PaidOrder order) =>
        Task.Run(() =>
        {
            try
            {
                action();
            }
            catch (Exception ex)
            {
                Log.StepFailed(logger, ex, step, order.OrderId);
            }
        });

    private static partial class Log
    {
        [LoggerMessage(1, LogLevel.Error, "Post-payment step {Step} failed for order {OrderId}; nothing retries it.")]
        public static partial void StepFailed(ILogger logger, Exception exception, string step, string orderId);
    }
}
