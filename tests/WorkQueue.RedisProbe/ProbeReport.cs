namespace WorkQueue.RedisProbe;

/// <summary>Writes the probe's findings as <c>key=value</c> lines on stdout, for the test that launched it to assert.</summary>
internal static class ProbeReport
{
    public const string Prefix = "probe.";

    private static readonly Lock Gate = new();

    public static void Write(string key, object? value)
    {
        string text = (value?.ToString() ?? "null").ReplaceLineEndings(" ");
        lock (Gate)
        {
            Console.Out.WriteLine($"{Prefix}{key}={text}");
            Console.Out.Flush();
        }
    }
}
