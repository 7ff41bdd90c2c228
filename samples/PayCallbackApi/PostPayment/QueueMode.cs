using PayCallbackApi.Callbacks;
using PayCallbackApi.Orders;
using WorkQueue;

namespace PayCallbackApi.PostPayment;

/// <summary>
/// The fix: one job per callback on the default queue, run by WorkQueue's dedicated workers. Enqueuing exactly one job
/// makes acceptance all-or-nothing: if the queue rejects it, the claim is undone and the callback answered 503, and the
/// gateway's retry starts afresh.
/// </summary>
public sealed class QueueDispatcher(OrderStore orders, IInMemoryWorkQueue queue) : IPostPaymentDispatcher
{
    public async ValueTask<Acceptance> AcceptAsync(PaymentCallback callback)
    {
        if (await orders.ClaimAsync(callback) != ClaimResult.New || callback.Status != PaymentStatus.Success)
        {
            return Acceptance.Duplicate;
        }

        if (queue.TryEnqueue<PostPaymentJob, PaidOrder>(PaidOrder.From(callback)))
        {
            return Acceptance.Accepted;
        }

        // Nothing was done for this payment yet: release it so the gateway's retry is processed as new.
        await orders.ReleaseAsync(callback);
        return Acceptance.Refused;
    }
}

/// <summary>Queue mode's hand-off to the in-memory <c>legacy</c> queue.</summary>
public sealed class InMemoryLegacyQueue([FromKeyedServices(PostPaymentQueues.Legacy)] IWorkQueue legacy) : ILegacyQueue
{
    public ValueTask EnqueueAsync(PaidOrder order, CancellationToken cancellationToken) =>
        legacy.EnqueueAsync<LegacyCallJob, PaidOrder>(order, cancellationToken);
}
