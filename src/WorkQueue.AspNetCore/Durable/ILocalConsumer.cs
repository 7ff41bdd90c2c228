using System.Diagnostics.CodeAnalysis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// This process's consumer of a durable queue (its <see cref="RedisStreamStore"/>), as the reading of jobs
/// (<see cref="RedisJobBrowser"/>) sees it: what it holds, for the status of a job running here, and that a cancel by
/// id ended a job, for its next trim. Nothing else of the consumer's loop is reachable from a request thread.
/// </summary>
internal interface ILocalConsumer
{
    /// <summary>Gets this process's consumer name in the queue's group.</summary>
    string ConsumerName { get; }

    /// <summary>Finds the entry this process holds (fetched, not yet settled) under <paramref name="streamId"/>.</summary>
    bool TryGetHeld(string streamId, [NotNullWhen(true)] out DurableEntry? entry);

    /// <summary>A cancel by id ended a job outside the consumer's round: the next round trims (the count cap may be passed).</summary>
    void EndedOutsideRound();
}
