using System.Globalization;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// A job's record as <c>includes/records.lua</c> writes it and <c>status.lua</c> and <c>findJobs.lua</c> return it
/// (see <see cref="DurableScripts"/>'s remarks): a header (state, cancel flag, when it ended, attempt, enqueued at,
/// consumer, started at, error, and the job type's name unless it is the queue's default type), then one part per
/// failed attempt, read in one place.
/// </summary>
/// <param name="State">The record's state letter (<c>S</c>, <c>D</c>, <c>C</c> ended; <c>r</c>, <c>q</c>, <c>z</c> live), or <c>\0</c> for no record.</param>
/// <param name="CancelRequested">Whether a cancel was asked of the job.</param>
/// <param name="At">When the job ended, if it did.</param>
/// <param name="Attempt">The attempt the header is about (1 when unknown).</param>
/// <param name="EnqueuedAt">When the job was first enqueued (the Unix epoch when unknown).</param>
/// <param name="Consumer">The consumer of the attempt the header is about, if any.</param>
/// <param name="StartedAt">When that attempt started, if it did.</param>
/// <param name="Error">That attempt's error, if any.</param>
/// <param name="History">The earlier attempts, each as it failed (outcome <see cref="JobState.Retrying"/>).</param>
/// <param name="JobType">The job type's name, or <see langword="null"/> for the queue's default type (and in a live record, which never holds it).</param>
internal readonly record struct JobRecord(
    char State, bool CancelRequested, DateTimeOffset? At, int Attempt, DateTimeOffset EnqueuedAt, string? Consumer, DateTimeOffset? StartedAt, string? Error, List<JobAttempt> History, string? JobType = null)
{
    /// <summary>Gets how long an ended job's record is kept in Redis (zero: none), from the queue's FinishedJobRetention and MaxFinishedJobs.</summary>
    public static long RetentionMs(WorkQueueOptions options) =>
        options.MaxFinishedJobs == 0 ? 0 : (long)options.FinishedJobRetention.TotalMilliseconds;

    /// <summary>Reads a record; no record (<see langword="null"/> or empty) reads as state <c>\0</c>, attempt 1, no history.</summary>
    public static JobRecord Parse(string? text)
    {
        if (string.IsNullOrEmpty(text))
        {
            return new JobRecord('\0', false, null, 1, DateTimeOffset.UnixEpoch, null, null, null, []);
        }

        string[] parts = text.Split(RecordText.AttemptSeparator);
        string[] h = parts[0].Split(RecordText.FieldSeparator);
        var history = new List<JobAttempt>(parts.Length - 1);
        for (int i = 1; i < parts.Length; i++)
        {
            string[] a = parts[i].Split(RecordText.FieldSeparator);
            if (a.Length >= 6)
            {
                history.Add(new JobAttempt(ReadAttempt(a[0]), NullIfEmpty(a[1]), ReadTime(a[2]), ReadTime(a[3]), JobState.Retrying, NullIfEmpty(a[5])));
            }
        }

        return new JobRecord(
            h[0].Length > 0 ? h[0][0] : '\0',
            Field(h, 1) == "1",
            ReadTime(Field(h, 2)),
            ReadAttempt(Field(h, 3)),
            ReadTime(Field(h, 4)) ?? DateTimeOffset.UnixEpoch,
            NullIfEmpty(Field(h, 5)),
            ReadTime(Field(h, 6)),
            NullIfEmpty(Field(h, 7)),
            history,
            NullIfEmpty(Field(h, 8)));
    }

    /// <summary>A time the scripts wrote (Unix ms, a score's text included), or <see langword="null"/> when none (empty, 0, unreadable).</summary>
    internal static DateTimeOffset? ReadTime(string? text) =>
        long.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out long ms) && ms > 0 ? DateTimeOffset.FromUnixTimeMilliseconds(ms) : null;

    /// <summary>An attempt number the scripts wrote, at least 1 (1 when unreadable).</summary>
    internal static int ReadAttempt(string? text) =>
        int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out int n) ? Math.Max(1, n) : 1;

    private static string? Field(string[] fields, int i) => i < fields.Length ? fields[i] : null;

    private static string? NullIfEmpty(string? s) => string.IsNullOrEmpty(s) ? null : s;
}
