using System.Text.Json;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// Carries the figures of the window-based scenarios (CPU time, round-trip percentiles) from the benchmark process,
/// which measures them, to the host process, whose <see cref="ResultColumn"/>s print them in the summary table.
/// One JSON file per benchmark in <see cref="BenchmarkSettings.ResultsDirectory"/>.
/// </summary>
public static class ResultStore
{
    /// <summary>Gets the key of a benchmark: its class and method names.</summary>
    /// <param name="type">The benchmark class.</param>
    /// <param name="method">The benchmark method's name.</param>
    /// <returns>The key.</returns>
    public static string Key(Type type, string method) => $"{type.Name}.{method}";

    /// <summary>Writes (replaces) the figures of one benchmark and prints them, labelled, to the benchmark's log.</summary>
    /// <param name="key">The benchmark's key.</param>
    /// <param name="values">The figures.</param>
    public static void Write(string key, IReadOnlyDictionary<string, double> values)
    {
        Directory.CreateDirectory(BenchmarkSettings.ResultsDirectory);
        File.WriteAllText(PathOf(key), JsonSerializer.Serialize(values));
        Console.WriteLine($"// WorkQueue.Benchmarks result {key}: {string.Join(", ", values.Select(v => $"{v.Key} = {v.Value:0.###}"))}");
    }

    /// <summary>Reads the figures of one benchmark.</summary>
    /// <param name="key">The benchmark's key.</param>
    /// <returns>The figures, or <see langword="null"/> if that benchmark did not record any in this run.</returns>
    public static IReadOnlyDictionary<string, double>? TryRead(string key)
    {
        string path = PathOf(key);
        return File.Exists(path) ? JsonSerializer.Deserialize<Dictionary<string, double>>(File.ReadAllText(path)) : null;
    }

    private static string PathOf(string key) => Path.Combine(BenchmarkSettings.ResultsDirectory, key + ".json");
}
