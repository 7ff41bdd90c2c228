using PayCallbackApi.Callbacks;

namespace PayCallbackApi.PostPayment;

/// <summary>What became of a callback that passed its checks.</summary>
public enum Acceptance
{
    /// <summary>First time this payment was seen; its post-payment work is accepted (answered 200).</summary>
    Accepted,

    /// <summary>Seen before, or not a successful payment: nothing more to do (answered 200).</summary>
    Duplicate,

    /// <summary>The work was not accepted (queue full, Redis unreachable); nothing was done (answered 503).</summary>
    Refused,

    /// <summary>Durable mode: another request is storing this payment's job right now (answered 503).</summary>
    InProgress,
}

/// <summary>Claims a callback's payment and hands its post-payment work to the background: one per processing mode.</summary>
public interface IPostPaymentDispatcher
{
    /// <summary>Claims the payment (once per payment id) and, when it is new and paid, dispatches its work.</summary>
    ValueTask<Acceptance> AcceptAsync(PaymentCallback callback);
}
