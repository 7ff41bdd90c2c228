using PayCallbackApi.Callbacks;
using PayCallbackApi.Orders;
using WorkQueue;

namespace PayCallbackApi.PostPayment;

/// <summary>
/// The fix, in Queue and Durable mode alike: one job per callback on the <c>payments</c> queue, produced through
/// <see cref="IWorkQueue"/> whichever store keeps it, and run by WorkQueue's dedicated workers. Enqueuing exactly one
/// job makes acceptance all-or-nothing: if the queue does not take it, the claim is undone and the callback answered
/// 503, and the gateway's retry starts afresh.
/// </summary>
/// <remarks>
/// <para>
/// The claim is the one thing the store decides, once, at construction. In Redis Streams a 200 means "the job is in
/// Redis", so the claim has two phases, so that a kill between the claim and the <c>XADD</c> cannot leave a later
/// duplicate answered 200 with no job: a pending claim that expires, the job stored, then the claim made final. A
/// duplicate that meets a pending claim is answered 503 (the gateway retries); one that meets an expired claim is
/// processed again, against the same order, whose effects are each recorded once.
/// </para>
/// <para>
/// In memory the claim is final at once, one Redis call per callback instead of two. The second phase would guard the
/// gap between the claim and the enqueue, but an in-memory enqueue is not a wait on another process (it completes before
/// the call returns), and a kill loses the queued jobs of every callback already answered 200 anyway: in memory, 200
/// means "accepted by this process", never "stored". The commit would buy nothing and cost a Redis round trip on every
/// callback, at the rate where Queue mode's CPU per callback is measured.
/// </para>
/// </remarks>
public sealed partial class QueueDispatcher(
    OrderStore orders,
    [FromKeyedServices(SampleQueues.Payments)] IWorkQueue payments,
    QueueStore store,
    ILogger<QueueDispatcher> logger) : IPostPaymentDispatcher
{
    private readonly bool _twoPhaseClaim = store == QueueStore.RedisStreams;

    public ValueTask<Acceptance> AcceptAsync(PaymentCallback callback) =>
        _twoPhaseClaim ? AcceptStoredAsync(callback) : AcceptInMemoryAsync(callback);

    private async ValueTask<Acceptance> AcceptInMemoryAsync(PaymentCallback callback)
    {
        if (await orders.ClaimAsync(callback) != ClaimResult.New || callback.Status != PaymentStatus.Success)
        {
            return Acceptance.Duplicate;
        }

        if (!await TryEnqueueAsync(callback))
        {
            // Nothing was done for this payment yet: release it so the gateway's retry is processed as new.
            await orders.ReleaseAsync(callback);
            return Acceptance.Refused;
        }

        return Acceptance.Accepted;
    }

    private async ValueTask<Acceptance> AcceptStoredAsync(PaymentCallback callback)
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

        if (!await TryEnqueueAsync(callback))
        {
            await orders.ReleasePendingAsync(callback);
            return Acceptance.Refused;
        }

        await orders.CommitAsync(callback);
        return Acceptance.Accepted;
    }

    /// <summary>Hands the callback's job to <c>payments</c>; <see langword="false"/> when the queue did not take it.</summary>
    private async ValueTask<bool> TryEnqueueAsync(PaymentCallback callback)
    {
        try
        {
            // Not the request's token: once the job may be on its way to Redis, the claim must be settled either way. (In
            // memory nothing waits: `payments` rejects when full.)
            await payments.EnqueueAsync<PostPaymentJob, PaidOrder>(PaidOrder.From(callback), CancellationToken.None);
            return true;
        }
        catch (JobRejectedException ex)
        {
            // A full queue is counted by the endpoint's RejectionLog, a line a second at most: under overload that is
            // thousands of callbacks a second. A stopped queue or an unreachable store is logged here, with its cause.
            if (ex.Reason != RejectionReason.QueueFull)
            {
                Log.NotAccepted(logger, ex, callback.OrderId, ex.Reason);
            }

            return false;
        }
    }

    private static partial class Log
    {
        [LoggerMessage(20, LogLevel.Warning, "The job of order {OrderId} was not accepted ({Reason}); the callback is answered 503 and its claim released.")]
        public static partial void NotAccepted(ILogger logger, Exception exception, string orderId, RejectionReason reason);
    }
}
