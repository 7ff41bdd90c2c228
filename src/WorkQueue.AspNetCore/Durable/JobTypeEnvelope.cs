namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The one writer and reader of a stored payload (stream field <c>p</c>, and every copy of it: delayed set, dead
/// letters): <c>{header}\u001f{JSON}</c>, the header being the job type's name (empty for the queue's default type),
/// then, when the enqueue ran in a traced activity, a space and that activity's W3C <c>traceparent</c>; or the JSON
/// alone for a job of the default type enqueued without one.
/// </summary>
/// <remarks>
/// The header travels inside the payload so that every script that moves a job (retry, hand-back, reclaim, promotion,
/// dead letter, requeue) carries it without knowing of it: a retried or scheduled job keeps its type and its trace.
/// JSON never holds a raw U+001F (System.Text.Json escapes control characters) and a header cannot, so the first
/// U+001F within a header's length, if any, ends the header. A job of the default type without a trace is written
/// bare, as version 0.2 wrote every payload: its entries stay readable by instances that know one type per queue, and
/// cost nothing extra.
/// </remarks>
internal static class JobTypeEnvelope
{
    /// <summary>Ends the header (the Lua side's <c>US</c>).</summary>
    public const char Separator = '\u001f';

    /// <summary>The length of a W3C <c>traceparent</c>: <c>00-{32 hex}-{16 hex}-{2 hex}</c>.</summary>
    public const int TraceParentLength = 55;

    /// <summary>The longest header: a name, a space and a <c>traceparent</c>.</summary>
    public const int MaxHeaderLength = JobTypeNames.MaxLength + 1 + TraceParentLength;

    /// <summary>
    /// Wraps <paramref name="json"/> in the envelope of <paramref name="typeName"/> (<see langword="null"/>: the default
    /// type) and <paramref name="traceParent"/> (<see langword="null"/>: none), or returns it bare when both are null.
    /// </summary>
    public static string Write(string? typeName, string? traceParent, string json) =>
        typeName is null && traceParent is null
            ? json
            : traceParent is null ? string.Concat(typeName, "\u001f", json) : string.Concat(typeName, " ", traceParent, "\u001f" + json);

    /// <summary>Reads a stored payload: its job type's name (<see langword="null"/>: the queue's default type) and its JSON.</summary>
    public static string? Read(string stored, out ReadOnlySpan<char> json) => Read(stored, out _, out json);

    /// <summary>Reads a stored payload: its job type's name (<see langword="null"/>: the default type), its trace's <c>traceparent</c> (<see langword="null"/>: none) and its JSON.</summary>
    public static string? Read(string stored, out string? traceParent, out ReadOnlySpan<char> json)
    {
        int end = stored.AsSpan(0, Math.Min(stored.Length, MaxHeaderLength + 1)).IndexOf(Separator);
        if (end <= 0)
        {
            traceParent = null;
            json = stored;
            return null;
        }

        json = stored.AsSpan(end + 1);
        int space = stored.AsSpan(0, end).IndexOf(' ');
        if (space < 0)
        {
            traceParent = null;
            return stored[..end];
        }

        traceParent = stored[(space + 1)..end];
        return space == 0 ? null : stored[..space];
    }
}

/// <summary>The rules of a job type's name.</summary>
internal static class JobTypeNames
{
    /// <summary>The longest name, in characters.</summary>
    public const int MaxLength = 100;

    /// <summary>Whether <paramref name="name"/> is a valid job type name: 1 to 100 ASCII letters, digits, <c>.</c>, <c>_</c>, <c>-</c> or <c>:</c>.</summary>
    public static bool IsValid(string? name)
    {
        if (string.IsNullOrEmpty(name) || name.Length > MaxLength)
        {
            return false;
        }

        foreach (char c in name)
        {
            if (!(char.IsAsciiLetterOrDigit(c) || c is '.' or '_' or '-' or ':'))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>Throws, naming <paramref name="paramName"/>, when <paramref name="name"/> is not valid.</summary>
    public static void Validate(string name, string paramName)
    {
        if (!IsValid(name))
        {
            throw new ArgumentException(
                $"'{name}' is not a valid job type name: one has 1 to {MaxLength} ASCII letters, digits, '.', '_', '-' or ':' (it is stored with every job of the type, and must stay stable across versions).",
                paramName);
        }
    }
}
