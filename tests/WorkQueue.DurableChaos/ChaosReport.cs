using System.Globalization;

namespace WorkQueue.DurableChaos;

/// <summary>Writes figures as <c>chaos.key=value</c> lines on stdout, for the test or script that launched the program to read.</summary>
internal static class ChaosReport
{
    public const string Prefix = "chaos.";

    private static readonly Lock Gate = new();

    public static void Write(string key, object? value) =>
        Line($"{Prefix}{key}={Format(value).ReplaceLineEndings(" ")}");

    /// <summary>Writes a line for people (progress, the summary), time-stamped with the run's elapsed time.</summary>
    public static void Say(TimeSpan elapsed, string text) =>
        Line(string.Create(CultureInfo.InvariantCulture, $"[{elapsed.TotalSeconds,7:F1}s] {text}"));

    private static void Line(string line)
    {
        lock (Gate)
        {
            Console.Out.WriteLine(line);
            Console.Out.Flush();
        }
    }

    private static string Format(object? value) => value switch
    {
        null => "null",
        double d => d.ToString("F0", CultureInfo.InvariantCulture),
        IFormattable f => f.ToString(null, CultureInfo.InvariantCulture),
        _ => value.ToString() ?? "null",
    };
}
