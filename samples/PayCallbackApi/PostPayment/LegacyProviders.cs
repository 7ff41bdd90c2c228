using Microsoft.Extensions.Options;

namespace PayCallbackApi.PostPayment;

/// <summary>The legacy SMS and delivery SDKs, as the post-payment steps see them: synchronous calls.</summary>
public interface ILegacyProviders
{
    void SendSms(PaidOrder order);

    void RequestDelivery(PaidOrder order);
}

/// <summary>
/// Stand-ins for the legacy SMS and delivery SDKs: synchronous clients that block their calling thread for the
/// provider's latency (<c>PayCallback:ProviderLatencyMs</c>). Exactly the kind of call that starves a thread pool.
/// </summary>
public sealed class LegacyProviders(IOptions<PayCallbackOptions> options) : ILegacyProviders
{
    private readonly int _latencyMs = options.Value.ProviderLatencyMs;

    public void SendSms(PaidOrder order) => Thread.Sleep(_latencyMs);

    public void RequestDelivery(PaidOrder order) => Thread.Sleep(_latencyMs);
}
