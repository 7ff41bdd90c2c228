using System.Globalization;

namespace WorkQueue.Internal;

/// <summary>
/// An in-memory queue's job ids as the public surface shows them: the engine numbers jobs with a <see langword="long"/>
/// and hands the number out as text, so one id type (a string) serves both kinds of queue.
/// </summary>
internal static class JobIds
{
    /// <summary>Writes an engine id as the public id.</summary>
    public static string Format(long id) => id.ToString(CultureInfo.InvariantCulture);

    /// <summary>Reads a public id back; <see langword="false"/> for text no in-memory job id can be (it names no job).</summary>
    public static bool TryParse(string? jobId, out long id) =>
        long.TryParse(jobId, NumberStyles.None, CultureInfo.InvariantCulture, out id);
}
