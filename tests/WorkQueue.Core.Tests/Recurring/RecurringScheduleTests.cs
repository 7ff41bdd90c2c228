using WorkQueue.Recurring;

namespace WorkQueue.Core.Tests.Recurring;

/// <summary>When occurrences fall: cron in a time zone across daylight-saving changes, and intervals on epoch marks.</summary>
public sealed class RecurringScheduleTests
{
    [Fact]
    public void Cron_SpringForward_SkippedLocalTimeRunsOnceAtTheJump()
    {
        // Paris, 2026-03-29: 02:00 local jumps to 03:00, so 02:30 never happens; the day's run is at 03:00 CEST (01:00 UTC).
        var schedule = RecurringSchedule.Cron("30 2 * * *", "Europe/Paris", "cron");
        var from = new DateTimeOffset(2026, 3, 28, 12, 0, 0, TimeSpan.Zero);
        var occurrences = Occurrences(schedule, from, 3);
        Assert.Equal(
            [
                new DateTimeOffset(2026, 3, 29, 1, 0, 0, TimeSpan.Zero),
                new DateTimeOffset(2026, 3, 30, 0, 30, 0, TimeSpan.Zero),
                new DateTimeOffset(2026, 3, 31, 0, 30, 0, TimeSpan.Zero),
            ],
            occurrences);
    }

    [Fact]
    public void Cron_FallBack_AmbiguousLocalTimeRunsOnce()
    {
        // Paris, 2026-10-25: 03:00 CEST falls back to 02:00 CET, so 02:30 happens twice; it runs once, at the first (00:30 UTC).
        var schedule = RecurringSchedule.Cron("30 2 * * *", "Europe/Paris", "cron");
        var from = new DateTimeOffset(2026, 10, 24, 12, 0, 0, TimeSpan.Zero);
        Assert.Equal(
            [
                new DateTimeOffset(2026, 10, 25, 0, 30, 0, TimeSpan.Zero),
                new DateTimeOffset(2026, 10, 26, 1, 30, 0, TimeSpan.Zero),
            ],
            Occurrences(schedule, from, 2));
    }

    [Fact]
    public void Cron_HourlyAcrossFallBack_RunsEachRealHour()
    {
        // An hourly job runs every real hour through the repeated local hour, as Hangfire and Quartz do.
        var schedule = RecurringSchedule.Cron("0 * * * *", "Europe/Paris", "cron");
        var from = new DateTimeOffset(2026, 10, 24, 23, 30, 0, TimeSpan.Zero);
        var occurrences = Occurrences(schedule, from, 4);
        Assert.Equal(Enumerable.Range(0, 4).Select(h => new DateTimeOffset(2026, 10, 25, h, 0, 0, TimeSpan.Zero)), occurrences);
    }

    [Fact]
    public void Every_FallsOnMultiplesSinceTheEpoch()
    {
        var schedule = RecurringSchedule.Every(TimeSpan.FromMinutes(5), "interval");
        Assert.Equal(new DateTimeOffset(2026, 11, 25, 2, 5, 0, TimeSpan.Zero), schedule.GetNextAfter(new DateTimeOffset(2026, 11, 25, 2, 0, 0, TimeSpan.Zero)));
        Assert.Equal(new DateTimeOffset(2026, 11, 25, 2, 5, 0, TimeSpan.Zero), schedule.GetNextAfter(new DateTimeOffset(2026, 11, 25, 2, 3, 17, TimeSpan.FromHours(1)).AddHours(1)));
        Assert.Equal("every 00:05:00", schedule.Text);
    }

    private static List<DateTimeOffset> Occurrences(RecurringSchedule schedule, DateTimeOffset from, int count)
    {
        var list = new List<DateTimeOffset>();
        var at = from;
        for (int i = 0; i < count; i++)
        {
            at = schedule.GetNextAfter(at)!.Value;
            list.Add(at.ToUniversalTime());
        }

        return list;
    }
}
