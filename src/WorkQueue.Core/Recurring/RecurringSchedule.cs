using System.Globalization;
using Cronos;

namespace WorkQueue.Recurring;

/// <summary>When a recurring job's occurrences fall: a cron expression in a time zone (read by Cronos), or a fixed interval.</summary>
internal abstract class RecurringSchedule
{
    public static readonly TimeSpan MinInterval = TimeSpan.FromSeconds(1);

    public static readonly TimeSpan MaxInterval = TimeSpan.FromDays(366);

    /// <summary>Gets the schedule as written.</summary>
    public abstract string Text { get; }

    /// <summary>Gets the time zone's id.</summary>
    public abstract string TimeZone { get; }

    /// <summary>
    /// Gets what identifies the schedule across instances, as the store compares it: the schedule as written and its time
    /// zone (<c>0 3 * * * (Europe/Paris)</c>, <c>every 00:05:00 (UTC)</c>).
    /// </summary>
    public string Fingerprint => $"{Text} ({TimeZone})";

    /// <summary>Parses a cron expression (five fields, or six with seconds first) in a time zone.</summary>
    /// <exception cref="ArgumentException">The expression or the time zone is not valid; the message names it.</exception>
    public static RecurringSchedule Cron(string expression, string timeZoneId, string expressionParamName)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(expression, expressionParamName);
        var zone = FindZone(timeZoneId);
        int fields = expression.Trim().Split(' ', StringSplitOptions.RemoveEmptyEntries).Length;
        CronExpression parsed;
        try
        {
            parsed = CronExpression.Parse(expression, fields == 6 ? CronFormat.IncludeSeconds : CronFormat.Standard);
        }
        catch (CronFormatException ex)
        {
            throw new ArgumentException($"'{expression}' is not a valid cron expression (five fields, or six with seconds first): {ex.Message}", expressionParamName, ex);
        }

        return new CronSchedule(expression.Trim(), parsed, zone);
    }

    /// <summary>A fixed interval, on multiples of it since the Unix epoch (so every instance and every restart agree).</summary>
    public static RecurringSchedule Every(TimeSpan interval, string paramName)
    {
        if (interval < MinInterval || interval > MaxInterval)
        {
            throw new ArgumentOutOfRangeException(paramName, interval, $"A recurring interval must be between {MinInterval} and {MaxInterval}.");
        }

        return new IntervalSchedule(interval);
    }

    /// <summary>Gets the first occurrence strictly after <paramref name="after"/>, or <see langword="null"/> if there is none.</summary>
    public abstract DateTimeOffset? GetNextAfter(DateTimeOffset after);

    private static TimeZoneInfo FindZone(string timeZoneId)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(timeZoneId, nameof(RecurringJobOptions.TimeZone));
        try
        {
            return TimeZoneInfo.FindSystemTimeZoneById(timeZoneId);
        }
        catch (Exception ex) when (ex is TimeZoneNotFoundException or InvalidTimeZoneException)
        {
            throw new ArgumentException($"RecurringJobOptions.TimeZone '{timeZoneId}' is not a time zone this machine knows (use an IANA id such as 'Europe/Paris', or 'UTC').", nameof(RecurringJobOptions.TimeZone), ex);
        }
    }

    private sealed class CronSchedule(string text, CronExpression expression, TimeZoneInfo zone) : RecurringSchedule
    {
        public override string Text => text;

        public override string TimeZone => zone.Id;

        // Cronos applies the rules Hangfire and Quartz use across daylight-saving changes: a skipped local time runs at
        // the jump, an ambiguous one runs once (its first offset), intervals that span the change keep their length.
        public override DateTimeOffset? GetNextAfter(DateTimeOffset after) => expression.GetNextOccurrence(after, zone, inclusive: false);
    }

    private sealed class IntervalSchedule(TimeSpan interval) : RecurringSchedule
    {
        public override string Text => "every " + interval.ToString("c", CultureInfo.InvariantCulture);

        public override string TimeZone => "UTC";

        public override DateTimeOffset? GetNextAfter(DateTimeOffset after)
        {
            long ticks = after.UtcTicks - DateTime.UnixEpoch.Ticks;
            long next = ((ticks / interval.Ticks) + 1) * interval.Ticks;
            long result = DateTime.UnixEpoch.Ticks + next;
            return result <= DateTimeOffset.MaxValue.UtcTicks ? new DateTimeOffset(result, TimeSpan.Zero) : null;
        }
    }
}
