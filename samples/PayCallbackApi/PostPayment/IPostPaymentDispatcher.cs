namespace PayCallbackApi.PostPayment;

/// <summary>Hands a paid order's post-payment work to the background.</summary>
public interface IPostPaymentDispatcher
{
    /// <returns><see langword="false"/> when the work was not accepted (the queue is full and rejecting).</returns>
    bool TryDispatch(PaidOrder order);
}
