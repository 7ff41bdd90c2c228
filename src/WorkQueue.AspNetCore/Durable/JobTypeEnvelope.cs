namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The one writer and reader of a stored payload (stream field <c>p</c>, and every copy of it: delayed set, dead
/// letters): <c>{job type name}\u001f{JSON}</c>, or the JSON alone for the queue's default job type.
/// </summary>
/// <remarks>
/// The name travels inside the payload so that every script that moves a job (retry, hand-back, reclaim, promotion,
/// dead letter, requeue) carries it without knowing of it. JSON never holds a raw U+001F (System.Text.Json escapes
/// control characters) and names cannot contain one, so the first U+001F, if any, within a name's length ends the
/// name. The default type is written bare, as version 0.2 wrote every payload: its entries stay readable by instances
/// that know one type per queue, and cost nothing extra.
/// </remarks>
internal static class JobTypeEnvelope
{
    /// <summary>Ends the name (the Lua side's <c>US</c>).</summary>
    public const char Separator = '\u001f';

    /// <summary>Wraps <paramref name="json"/> in the envelope of <paramref name="typeName"/>, or returns it bare when <see langword="null"/> (the default type).</summary>
    public static string Write(string? typeName, string json) =>
        typeName is null ? json : string.Concat(typeName, "\u001f", json);

    /// <summary>Reads a stored payload: its job type's name (<see langword="null"/> when bare: the queue's default type) and its JSON.</summary>
    public static string? Read(string stored, out ReadOnlySpan<char> json)
    {
        int i = stored.AsSpan(0, Math.Min(stored.Length, JobTypeNames.MaxLength + 1)).IndexOf(Separator);
        if (i <= 0)
        {
            json = stored;
            return null;
        }

        json = stored.AsSpan(i + 1);
        return stored[..i];
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
