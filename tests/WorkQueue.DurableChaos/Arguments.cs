using System.Globalization;

namespace WorkQueue.DurableChaos;

/// <summary><c>--name value</c> options and <c>--flag</c> switches after the mode; unknown names are refused.</summary>
internal sealed class Arguments
{
    private readonly Dictionary<string, string?> _values = new(StringComparer.Ordinal);
    private readonly HashSet<string> _read = new(StringComparer.Ordinal);

    public Arguments(IEnumerable<string> args, IReadOnlySet<string> flags)
    {
        using var e = args.GetEnumerator();
        while (e.MoveNext())
        {
            string arg = e.Current;
            if (!arg.StartsWith("--", StringComparison.Ordinal) || arg.Length == 2)
            {
                throw new ArgumentException($"Expected an option (--name), got '{arg}'.");
            }

            string name = arg[2..];
            if (flags.Contains(name))
            {
                _values[name] = null;
            }
            else if (e.MoveNext())
            {
                _values[name] = e.Current;
            }
            else
            {
                throw new ArgumentException($"Option --{name} needs a value.");
            }
        }
    }

    public string Required(string name) =>
        Optional(name) ?? throw new ArgumentException($"Option --{name} is required.");

    public string? Optional(string name)
    {
        _read.Add(name);
        return _values.TryGetValue(name, out var value) ? value : null;
    }

    public int Int(string name, int defaultValue, int min = 0)
    {
        string? text = Optional(name);
        if (text is null)
        {
            return defaultValue;
        }

        if (!int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out int value) || value < min)
        {
            throw new ArgumentException($"Option --{name} must be a whole number of at least {min}, got '{text}'.");
        }

        return value;
    }

    public bool Flag(string name)
    {
        _read.Add(name);
        return _values.ContainsKey(name);
    }

    /// <summary>Fails on an option nobody asked for (a typo would otherwise silently run the defaults).</summary>
    public void ThrowIfUnknown()
    {
        var unknown = _values.Keys.Where(k => !_read.Contains(k)).ToArray();
        if (unknown.Length > 0)
        {
            throw new ArgumentException($"Unknown option(s): {string.Join(", ", unknown.Select(u => "--" + u))}.");
        }
    }
}
