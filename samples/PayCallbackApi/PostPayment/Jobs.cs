using WorkQueue;

namespace PayCallbackApi.PostPayment;

/// <summary>
/// One paid order's post-payment job: the Redis steps, then one job for the two blocking provider calls handed to the
/// <c>legacy</c> queue, a bulkhead, so slow providers hold back only their own queue. That queue waits for space rather
/// than rejecting, because this work was already accepted. The hand-off goes through <see cref="IWorkQueue"/>, so it is
/// the same code whether <c>legacy</c> is in memory or in Redis. Safe to run again: each step is recorded once.
/// </summary>
public sealed class PostPaymentJob(PostPaymentSteps steps, [FromKeyedServices(SampleQueues.Legacy)] IWorkQueue legacy) : IJobHandler<PaidOrder>
{
    public async ValueTask ExecuteAsync(PaidOrder order, CancellationToken cancellationToken)
    {
        steps.SettleAndPublish(order);
        await legacy.EnqueueAsync<LegacyCallJob, PaidOrder>(order, cancellationToken);
    }
}

/// <summary>
/// One order's blocking legacy provider calls (SMS, then delivery) on the <c>legacy</c> queue's dedicated threads: one
/// job, not one per call, so a callback costs one hand-off and one Redis round trip fewer (see the sample README's
/// cost section). Each call is recorded right after it returns; a retry makes only the calls not recorded yet.
/// </summary>
public sealed class LegacyCallJob(PostPaymentSteps steps) : IJobHandler<PaidOrder>
{
    public ValueTask ExecuteAsync(PaidOrder order, CancellationToken cancellationToken)
    {
        steps.CallProviders(order);
        return default;
    }
}
