using System.Globalization;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// A percentile of the measured iterations, in microseconds. BenchmarkDotNet ships P0..P100 columns but no P99.
/// </summary>
/// <param name="percentile">The percentile, from 0 to 100.</param>
public sealed class PercentileColumn(int percentile) : IColumn
{
    /// <inheritdoc/>
    public string Id => $"{nameof(PercentileColumn)}.{percentile}";

    /// <inheritdoc/>
    public string ColumnName => $"P{percentile} [us]";

    /// <inheritdoc/>
    public bool AlwaysShow => true;

    /// <inheritdoc/>
    public ColumnCategory Category => ColumnCategory.Statistics;

    /// <inheritdoc/>
    public int PriorityInCategory => 100 + percentile;

    /// <inheritdoc/>
    public bool IsNumeric => true;

    /// <inheritdoc/>
    public UnitType UnitType => UnitType.Dimensionless;

    /// <inheritdoc/>
    public string Legend => $"{percentile}th percentile of the measured iterations, in microseconds";

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) => GetValue(summary, benchmarkCase, summary.Style);

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style) =>
        summary[benchmarkCase]?.ResultStatistics is { } statistics
            ? (statistics.Percentiles.Percentile(percentile) / 1000).ToString("N1", CultureInfo.InvariantCulture)
            : "?";

    /// <inheritdoc/>
    public bool IsAvailable(Summary summary) => true;

    /// <inheritdoc/>
    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;

    /// <inheritdoc/>
    public override string ToString() => ColumnName;
}
