using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;

namespace WorkQueue.AotSmoke;

/// <summary>The payments enqueued, by id, for the handler to compare with what it reads back.</summary>
internal sealed class SentPayments
{
    private readonly ConcurrentDictionary<string, Payment> _sent = new(StringComparer.Ordinal);

    public void Add(Payment payment) => _sent[payment.Id] = payment;

    public bool TryGet(string id, [NotNullWhen(true)] out Payment? payment) => _sent.TryGetValue(id, out payment);
}
