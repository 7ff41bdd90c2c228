namespace PayCallbackApi.PostPayment;

/// <summary>
/// The "before" picture, kept honest: each step fired onto the shared CLR thread pool with <c>Task.Run</c>, as the
/// original service fired an <c>Action</c> per step. Nothing bounds it and nothing retries it.
/// </summary>
public sealed partial class NaiveDispatcher(PostPaymentSteps steps, ILogger<NaiveDispatcher> logger) : IPostPaymentDispatcher
{
    public bool TryDispatch(PaidOrder order)
    {
        Fire(steps.LoadOrderDetails, order);
        Fire(steps.Settle, order);
        Fire(steps.PublishMessage, order);
        Fire(steps.SendSms, order);
        Fire(steps.RequestDelivery, order);
        return true;
    }

    private void Fire(Action<PaidOrder> step, PaidOrder order) =>
        Task.Run(() =>
        {
            try
            {
                step(order);
            }
            catch (Exception ex)
            {
                Log.StepFailed(logger, ex, step.Method.Name, order.OrderId);
            }
        });

    private static partial class Log
    {
        [LoggerMessage(1, LogLevel.Error, "Post-payment step {Step} failed for order {OrderId}; nothing retries it.")]
        public static partial void StepFailed(ILogger logger, Exception exception, string step, string orderId);
    }
}
