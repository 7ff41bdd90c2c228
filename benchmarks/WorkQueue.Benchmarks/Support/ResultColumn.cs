using System.Globalization;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// A summary column that shows one figure a window-based benchmark recorded through <see cref="ResultStore"/>, or its
/// ratio to the baseline's.
/// </summary>
public sealed class ResultColumn : IColumn
{
    private readonly string _metric;
    private readonly string _format;
    private readonly ResultRatio _ratio;
    private readonly string? _keySuffix;

    /// <summary>Initializes a new instance of the <see cref="ResultColumn"/> class.</summary>
    /// <param name="metric">The figure's name in the recorded results.</param>
    /// <param name="columnName">The column header.</param>
    /// <param name="legend">The legend line under the table.</param>
    /// <param name="format">The numeric format.</param>
    /// <param name="ratio">Whether to show the figure or its ratio to the baseline benchmark's.</param>
    /// <param name="keySuffix">
    /// The parameter whose value (after a dot) completes the key the benchmark recorded its figures under, for a class
    /// whose figures depend on a <c>[Params]</c> value; <see langword="null"/> when they do not.
    /// </param>
    public ResultColumn(string metric, string columnName, string legend, string format = "N1", ResultRatio ratio = ResultRatio.None, string? keySuffix = null)
    {
        _metric = metric;
        _format = format;
        _ratio = ratio;
        _keySuffix = keySuffix;
        ColumnName = columnName;
        Legend = legend;
    }

    /// <inheritdoc/>
    public string Id => $"{nameof(ResultColumn)}.{ColumnName}";

    /// <inheritdoc/>
    public string ColumnName { get; }

    /// <inheritdoc/>
    public bool AlwaysShow => true;

    /// <inheritdoc/>
    public ColumnCategory Category => ColumnCategory.Custom;

    /// <inheritdoc/>
    public int PriorityInCategory => 0;

    /// <inheritdoc/>
    public bool IsNumeric => true;

    /// <inheritdoc/>
    public UnitType UnitType => UnitType.Dimensionless;

    /// <inheritdoc/>
    public string Legend { get; }

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) => GetValue(summary, benchmarkCase, summary.Style);

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style)
    {
        if (Read(benchmarkCase) is not { } value)
        {
            return "?";
        }

        if (_ratio == ResultRatio.None)
        {
            return value.ToString(_format, CultureInfo.InvariantCulture);
        }

        var baseline = summary.BenchmarksCases.FirstOrDefault(c =>
            c.Descriptor.Baseline && c.Descriptor.Type == benchmarkCase.Descriptor.Type && c.Job == benchmarkCase.Job
            && c.Parameters.ValueInfo == benchmarkCase.Parameters.ValueInfo);
        if (baseline is null || Read(baseline) is not { } reference)
        {
            return "?";
        }

        double ratio = _ratio == ResultRatio.OverBaseline ? value / reference : reference / value;
        return double.IsFinite(ratio) ? ratio.ToString(_format, CultureInfo.InvariantCulture) : "?";
    }

    /// <inheritdoc/>
    public bool IsAvailable(Summary summary) => true;

    /// <inheritdoc/>
    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;

    /// <inheritdoc/>
    public override string ToString() => ColumnName;

    private double? Read(BenchmarkCase benchmarkCase)
    {
        string key = ResultStore.Key(benchmarkCase.Descriptor.Type, benchmarkCase.Descriptor.WorkloadMethod.Name);
        if (_keySuffix is not null)
        {
            key += "." + benchmarkCase.Parameters[_keySuffix];
        }

        return ResultStore.TryRead(key) is { } values && values.TryGetValue(_metric, out double value) ? value : null;
    }
}
