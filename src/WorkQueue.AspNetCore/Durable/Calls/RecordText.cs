namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// The separators of a job's record as <c>includes/records.lua</c> writes it (<c>header(...)</c>, then one part per
/// attempt), and the one rule for text that goes into it from C#.
/// </summary>
internal static class RecordText
{
    /// <summary>Separates a record's fields (the Lua side's <c>US</c>).</summary>
    public const char FieldSeparator = '\u001f';

    /// <summary>Separates a record's header from each attempt (the Lua side's <c>RS</c>).</summary>
    public const char AttemptSeparator = '\u001e';

    /// <summary>An error as a record stores it: its separators (control characters no message needs) become spaces.</summary>
    public static string Error(string error) =>
        error.AsSpan().IndexOfAny(FieldSeparator, AttemptSeparator) < 0 ? error : error.Replace(FieldSeparator, ' ').Replace(AttemptSeparator, ' ');
}
