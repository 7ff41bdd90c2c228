using PayCallbackApi.Callbacks;
using PayCallbackApi.Orders;

namespace PayCallbackApi.PostPayment;

/// <summary>
/// Bare mode, a measuring baseline: the claim of <see cref="QueueDispatcher"/> and nothing after it, so the load
/// comparison can subtract the request path's cost from Queue and Durable mode's and show what the post-payment
/// pipeline costs per callback. A real service never runs this: its accepted payments are never settled.
/// </summary>
public sealed class BareDispatcher(OrderStore orders) : IPostPaymentDispatcher
{
    public async ValueTask<Acceptance> AcceptAsync(PaymentCallback callback) =>
        await orders.ClaimAsync(callback) == ClaimResult.New && callback.Status == PaymentStatus.Success
            ? Acceptance.Accepted
            : Acceptance.Duplicate;
}
