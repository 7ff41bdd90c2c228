using WorkQueue;

namespace PayCallbackApi.PostPayment;

/// <summary>
/// One paid order's post-payment job: the Redis steps, then the two blocking provider calls handed to the <c>legacy</c>
/// queue, a bulkhead, so slow providers hold back only their own queue. That queue waits for space rather than
/// rejecting, because this work was already accepted. Safe to run again: each step is recorded once.
/// </summary>
public sealed class PostPaymentJob(PostPaymentSteps steps, ILegacyQueue legacy) : IJobHandler<PaidOrder>
{
    public async ValueTask ExecuteAsync(PaidOrder order, CancellationToken cancellationToken)
    {
        steps.SettleAndPublish(order);
        await legacy.EnqueueAsync(new LegacyCall(order, LegacyStep.Sms), cancellationToken);
        await legacy.EnqueueAsync(new LegacyCall(order, LegacyStep.Delivery), cancellationToken);
    }
}

/// <summary>One blocking legacy provider call (SMS or delivery) on the <c>legacy</c> queue's dedicated threads.</summary>
public sealed class LegacyCallJob(PostPaymentSteps steps) : IJobHandler<LegacyCall>
{
    public ValueTask ExecuteAsync(LegacyCall call, CancellationToken cancellationToken)
    {
        steps.CallProvider(call.Order, call.Step);
        return default;
    }
}

/// <summary>Where <see cref="PostPaymentJob"/> sends the provider calls: the in-memory or the durable <c>legacy</c> queue.</summary>
public interface ILegacyQueue
{
    ValueTask EnqueueAsync(LegacyCall call, CancellationToken cancellationToken);
}

/// <summary>The sample's queue names.</summary>
public static class PostPaymentQueues
{
    /// <summary>Durable mode's queue of post-payment jobs (Queue mode uses the default queue).</summary>
    public const string Payments = "payments";

    /// <summary>The bulkhead for the blocking provider calls.</summary>
    public const string Legacy = "legacy";
}
