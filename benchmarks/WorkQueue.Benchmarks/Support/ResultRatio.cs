namespace WorkQueue.Benchmarks.Support;

/// <summary>How a <see cref="ResultColumn"/> relates a benchmark's figure to the baseline's.</summary>
public enum ResultRatio
{
    /// <summary>The figure itself.</summary>
    None,

    /// <summary>The figure divided by the baseline's (BenchmarkDotNet's <c>Ratio</c> convention: below 1 is less).</summary>
    OverBaseline,

    /// <summary>The baseline's figure divided by this one ("how many times less than the baseline").</summary>
    BaselineOverThis,
}
