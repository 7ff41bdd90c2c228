using PayCallbackApi.Callbacks;
using PayCallbackApi.Orders;
using WorkQueue;
using WorkQueue.AspNetCore;

namespace PayCallbackApi.PostPayment;

/// <summary>
/// Durable mode: a callback is answered 200 only once its job is in Redis. The claim has two phases so that a kill
/// between the claim and the <c>XADD</c> cannot leave a later duplicate answered 200 with no job: a pending claim that
/// expires, the job stored, then the claim made final. A duplicate that meets a pending claim is answered 503 (the
/// gateway retries); one that meets an expired claim is processed again, against the same order, whose effects are
/// each recorded once.
/// </summary>
public sealed partial class DurableDispatcher(
    OrderStore orders,
    [FromKeyedServices(PostPaymentQueues.Payments)] IDurableQueue<PaidOrder> payments,
    ILogger<DurableDispatcher> logger) : IPostPaymentDispatcher
{
    public async ValueTask<Acceptance> AcceptAsync(PaymentCallback callback)
    {
        switch (await orders.ClaimPendingAsync(callback))
        {
            case ClaimResult.Duplicate:
            case ClaimResult.DuplicateCharge:
                // A second payment for a paid order is recorded for a refund (pay:duplicate-charges); nothing ships twice.
                return Acceptance.Duplicate;
            case ClaimResult.InProgress:
                return Acceptance.InProgress;
        }

        try
        {
            // Not the request's token: once the job may be on its way to Redis, the claim must be settled either way.
            await payments.EnqueueAsync(PaidOrder.From(callback), CancellationToken.None);
        }
        catch (JobRejectedException ex)
        {
            Log.NotStored(logger, ex, callback.OrderId, ex.Reason);
            await orders.ReleasePendingAsync(callback);
            return Acceptance.Refused;
        }

        await orders.CommitAsync(callback);
        return Acceptance.Accepted;
    }

    private static partial class Log
    {
        [LoggerMessage(20, LogLevel.Warning, "The job of order {OrderId} was not stored ({Reason}); the callback is answered 503 and its claim released.")]
        public static partial void NotStored(ILogger logger, Exception exception, string orderId, RejectionReason reason);
    }
}

/// <summary>Durable mode's hand-off to the durable <c>legacy</c> queue.</summary>
public sealed class DurableLegacyQueue([FromKeyedServices(PostPaymentQueues.Legacy)] IDurableQueue<PaidOrder> legacy) : ILegacyQueue
{
    public async ValueTask EnqueueAsync(PaidOrder order, CancellationToken cancellationToken) =>
        await legacy.EnqueueAsync(order, cancellationToken);
}
