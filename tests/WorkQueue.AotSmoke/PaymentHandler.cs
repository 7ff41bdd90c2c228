namespace WorkQueue.AotSmoke;

/// <summary>
/// The durable queue's handler: passes a payment's check when the payload read back from Redis equals the one
/// enqueued (every field through the source-generated JSON contract).
/// </summary>
internal sealed class PaymentHandler(SmokeLog log, SentPayments sent) : IJobHandler<Payment>
{
    public ValueTask ExecuteAsync(Payment payload, CancellationToken cancellationToken)
    {
        string check = $"durable job ran: {payload.Id}";
        if (sent.TryGet(payload.Id, out var expected))
        {
            log.Check(check, payload == expected, $"read back {payload}, enqueued {expected}");
        }
        else
        {
            log.Fail(check, $"no payment '{payload.Id}' was enqueued");
        }

        return ValueTask.CompletedTask;
    }
}
