using System.Text;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// Reads the durable protocol's Lua scripts from the assembly (<c>Durable/Scripts/{name}.lua</c>, embedded) and expands
/// their includes, as BullMQ does for <c>src/commands</c>: a line <c>--- @include "path"</c> is replaced by the file at
/// that path (relative to the including file's folder, <c>.lua</c> implied), itself expanded. A file is included once per
/// script, where it is first named: the shared functions are Lua locals, so each must come before the first function
/// that calls it, and an include names what it needs itself.
/// </summary>
internal static class DurableScriptLoader
{
    private const string Root = "Durable/Scripts/";
    private const string IncludeDirective = "--- @include \"";

    /// <summary>Loads script <paramref name="name"/> (<c>Durable/Scripts/{name}.lua</c>) with its includes expanded.</summary>
    /// <exception cref="InvalidOperationException">The script, or a file it includes, is not in the assembly.</exception>
    public static string Load(string name) => Load(name, new HashSet<string>(StringComparer.Ordinal));

    /// <summary>
    /// Loads script <paramref name="name"/> with its includes expanded, adding to <paramref name="files"/> the resource
    /// name of each file it is made of (the script's own first).
    /// </summary>
    public static string Load(string name, ISet<string> files)
    {
        var text = new StringBuilder();
        Expand(Root + name + ".lua", text, files);
        return text.ToString();
    }

    private static void Expand(string path, StringBuilder text, ISet<string> included)
    {
        if (!included.Add(path))
        {
            return;
        }

        var folder = path[..(path.LastIndexOf('/') + 1)];
        using var reader = new StringReader(Read(path));
        while (reader.ReadLine() is { } line)
        {
            if (line.StartsWith(IncludeDirective, StringComparison.Ordinal))
            {
                var end = line.IndexOf('"', IncludeDirective.Length);
                if (end < 0)
                {
                    throw new InvalidOperationException($"Durable script '{path}' has an unterminated include: {line}");
                }

                Expand(Normalize(folder + line[IncludeDirective.Length..end] + ".lua"), text, included);
                continue;
            }

            text.Append(line).Append('\n');
        }
    }

    private static string Read(string path)
    {
        using var stream = typeof(DurableScriptLoader).Assembly.GetManifestResourceStream(path)
            ?? throw new InvalidOperationException($"Durable script '{path}' is not embedded in {typeof(DurableScriptLoader).Assembly.GetName().Name}.");
        using var reader = new StreamReader(stream, Encoding.UTF8);
        return reader.ReadToEnd();
    }

    // Resolves "a/b/../c" so that an include may name a sibling folder's file.
    private static string Normalize(string path)
    {
        var parts = new List<string>();
        foreach (var part in path.Split('/'))
        {
            if (part == "..")
            {
                parts.RemoveAt(parts.Count - 1);
            }
            else if (part is not ("." or ""))
            {
                parts.Add(part);
            }
        }

        return string.Join('/', parts);
    }
}
