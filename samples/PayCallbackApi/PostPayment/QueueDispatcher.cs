using WorkQueue;

namespace PayCallbackApi.PostPayment;

/// <summary>
/// The fix: one job per callback on the default queue, run by WorkQueue's dedicated workers. Enqueuing exactly one job
/// makes acceptance all-or-nothing: if the queue rejects it, the callback is answered 503 and released, and the gateway's
/// retry starts afresh.
/// </summary>
public sealed class QueueDispatcher(IWorkQueue queue) : IPostPaymentDispatcher
{
    public bool TryDispatch(PaidOrder order) => queue.TryEnqueue<PostPaymentJob, PaidOrder>(order);
}

/// <summary>
/// Runs the Redis steps, then hands the two blocking provider calls to the <c>legacy</c> queue: a bulkhead, so slow
/// providers hold back only their own queue. That queue waits for space rather than rejecting, because this work was
/// already accepted.
/// </summary>
public sealed class PostPaymentJob(PostPaymentSteps steps, [FromKeyedServices(PostPaymentQueues.Legacy)] IWorkQueue legacy) : IJobHandler<PaidOrder>
{
    public async ValueTask ExecuteAsync(PaidOrder order, CancellationToken cancellationToken)
    {
        steps.LoadOrderDetails(order);
        steps.Settle(order);
        steps.PublishMessage(order);
        await legacy.EnqueueAsync<SmsJob, PaidOrder>(order, cancellationToken);
        await legacy.EnqueueAsync<DeliveryJob, PaidOrder>(order, cancellationToken);
    }
}

/// <summary>Sends the payment SMS through the blocking legacy client.</summary>
public sealed class SmsJob(PostPaymentSteps steps) : IJobHandler<PaidOrder>
{
    public ValueTask ExecuteAsync(PaidOrder order, CancellationToken cancellationToken)
    {
        steps.SendSms(order);
        return default;
    }
}

/// <summary>Requests delivery through the blocking legacy client.</summary>
public sealed class DeliveryJob(PostPaymentSteps steps) : IJobHandler<PaidOrder>
{
    public ValueTask ExecuteAsync(PaidOrder order, CancellationToken cancellationToken)
    {
        steps.RequestDelivery(order);
        return default;
    }
}

/// <summary>The sample's queue names.</summary>
public static class PostPaymentQueues
{
    public const string Legacy = "legacy";
}
