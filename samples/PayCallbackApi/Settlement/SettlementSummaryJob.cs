using System.Globalization;
using StackExchange.Redis;
using WorkQueue;

namespace PayCallbackApi.Settlement;

/// <summary>
/// The nightly settlement summary, a recurring job (<c>PayCallback:SettlementSummaryCron</c>, 02:00 UTC by default):
/// copies the merchant balance per currency into <c>pay:settlement:summary:{day}</c>, the day being the occurrence's
/// date. Writing the same day again writes the same figures, so a run repeated after a crash does no harm. It runs on the
/// <c>settlement</c> queue (<see cref="SampleQueues"/>): in memory (Queue mode) each instance runs its own; in Redis
/// (Durable mode) once per night however many instances run, and a night missed while every instance was down is run at
/// the next start.
/// </summary>
internal sealed class SettlementSummaryJob(IConnectionMultiplexer redis, ILogger<SettlementSummaryJob> logger) : IJobHandler<RecurringOccurrence>
{
    public const string Id = "settlement-summary";

    public static string SummaryKey(DateTimeOffset occurrence) =>
        "pay:settlement:summary:" + occurrence.UtcDateTime.ToString("yyyy-MM-dd", CultureInfo.InvariantCulture);

    public async ValueTask ExecuteAsync(RecurringOccurrence payload, CancellationToken cancellationToken)
    {
        var db = redis.GetDatabase();
        var balances = await db.HashGetAllAsync("pay:merchant:balance").ConfigureAwait(false);
        string key = SummaryKey(payload.ScheduledFor);
        var fields = balances
            .Select(b => new HashEntry("balance:" + b.Name, b.Value))
            .Append(new HashEntry("occurrence", payload.ScheduledFor.ToString("O", CultureInfo.InvariantCulture)))
            .Append(new HashEntry("manual", payload.IsTriggeredManually ? "1" : "0"))
            .Append(new HashEntry("generatedAt", DateTimeOffset.UtcNow.ToString("O", CultureInfo.InvariantCulture)))
            .ToArray();
        await db.HashSetAsync(key, fields).ConfigureAwait(false);
        logger.LogInformation("Settlement summary for {Occurrence:O} written to {Key}: {Currencies} currencies.", payload.ScheduledFor, key, balances.Length);
    }
}
