using System.Globalization;
using StackExchange.Redis;

namespace WorkQueue.DurableChaos;

/// <summary>
/// The recurring chaos job (<c>worker --recurring</c>): records that this process started the occurrence (a list entry
/// <c>occurrence|pid</c>), works 100-300 ms (long enough for the controller to kill it mid-run), then counts the occurrence as run (<c>HINCRBY</c>) and records which process ran it, in one transaction. A kill between
/// the two leaves a start with no run (the occurrence is reclaimed and runs elsewhere); a kill after the count and before
/// the library acknowledges it makes an explained duplicate. A failed Redis call throws and the queue retries the job.
/// </summary>
internal sealed class TickHandler(IConnectionMultiplexer redis, ChaosKeys keys) : IJobHandler<RecurringOccurrence>
{
    public async ValueTask ExecuteAsync(RecurringOccurrence payload, CancellationToken cancellationToken)
    {
        string occurrence = payload.ScheduledFor.ToUnixTimeMilliseconds().ToString(CultureInfo.InvariantCulture);
        var db = redis.GetDatabase();
        await db.ListRightPushAsync(keys.TickStarts, string.Create(CultureInfo.InvariantCulture, $"{occurrence}|{Environment.ProcessId}"));
        await Task.Delay(Random.Shared.Next(100, 301), cancellationToken);
        var done = db.CreateTransaction();
        _ = done.HashIncrementAsync(keys.TickRuns, occurrence);
        _ = done.ListRightPushAsync(keys.TickEnds, string.Create(CultureInfo.InvariantCulture, $"{occurrence}|{Environment.ProcessId}"));
        if (!await done.ExecuteAsync())
        {
            throw new InvalidOperationException("The run's record was not committed.");
        }
    }
}
