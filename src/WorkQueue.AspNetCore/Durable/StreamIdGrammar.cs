using System.Globalization;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The ids a durable queue hands out, as callers may give them back: checked here so that Redis never sees one it would
/// refuse (a server error, which must not read as Redis being unavailable) or read as another id.
/// </summary>
/// <remarks>
/// Redis writes a stream id as <c>{ms}-{seq}</c>, two unsigned 64-bit integers in decimal. It reads more than it
/// writes (a sign, leading zeros, <c>{ms}</c> alone as a range), but only the form it writes is accepted here: an id is
/// also a key (a job's record is named after it), so <c>01-0</c> would find the entry <c>1-0</c> and write its record
/// under another name.
/// </remarks>
internal static class StreamIdGrammar
{
    /// <summary>The longest job id: <c>s</c>, then two 20-digit numbers and the dash.</summary>
    private const int MaxJobIdLength = 42;

    /// <summary>Whether <paramref name="id"/> is a complete stream id as Redis writes one: <c>{ms}-{seq}</c>, each from 0 to 2^64-1, in decimal without sign or leading zero.</summary>
    /// <param name="id">The id to check.</param>
    /// <returns><see langword="true"/> if Redis would write this id.</returns>
    public static bool IsStreamId(ReadOnlySpan<char> id)
    {
        int dash = id.IndexOf('-');
        return dash > 0 && IsNumber(id[..dash]) && IsNumber(id[(dash + 1)..]);
    }

    /// <summary>Whether <paramref name="id"/> is a durable job id: a stream id (<c>{ms}-{seq}</c>, as <c>EnqueueAsync</c> returns it) or a scheduled job's (<c>s{ms}-{n}</c>, as <c>ScheduleAsync</c> does).</summary>
    /// <param name="id">The id to check.</param>
    /// <returns><see langword="true"/> if the queue could have handed out this id.</returns>
    public static bool IsJobId(string? id) =>
        id is { Length: > 0 and <= MaxJobIdLength } && IsStreamId(id[0] == 's' ? id.AsSpan(1) : id.AsSpan());

    private static bool IsNumber(ReadOnlySpan<char> digits) =>
        digits.Length > 0
        && (digits[0] != '0' || digits.Length == 1)
        && !digits.ContainsAnyExceptInRange('0', '9')
        && ulong.TryParse(digits, NumberStyles.None, CultureInfo.InvariantCulture, out _);
}
