using System.ComponentModel.DataAnnotations;
using System.Globalization;

namespace WorkQueue.Validation;

/// <summary>
/// Requires a <see cref="TimeSpan"/> from <see cref="Minimum"/> to <see cref="Maximum"/>, both included, as
/// <c>[Range(typeof(TimeSpan), minimum, maximum)]</c> does, with the same message.
/// </summary>
/// <remarks>
/// <see cref="RangeAttribute"/>'s constructor that takes a type finds a <c>TypeConverter</c> for it by reflection, so it
/// is marked <c>RequiresUnreferencedCode</c> and cannot sit on the options of a trimmable library. This one parses its
/// bounds itself; the source-generated options validators create it as they create any validation attribute (dotnet/extensions
/// validates its resilience options' time spans the same way, with its own <c>TimeSpanAttribute</c>).
/// </remarks>
[AttributeUsage(AttributeTargets.Property | AttributeTargets.Field | AttributeTargets.Parameter, AllowMultiple = false)]
internal sealed class TimeSpanRangeAttribute : ValidationAttribute
{
    /// <summary>Requires a value from <paramref name="minimum"/> to <paramref name="maximum"/> (each in the invariant <c>[d.]hh:mm:ss[.fffffff]</c> form).</summary>
    public TimeSpanRangeAttribute(string minimum, string maximum)
        : base("The field {0} must be between {1} and {2}.")
    {
        Minimum = TimeSpan.Parse(minimum, CultureInfo.InvariantCulture);
        Maximum = TimeSpan.Parse(maximum, CultureInfo.InvariantCulture);
    }

    /// <summary>Gets the smallest value allowed.</summary>
    public TimeSpan Minimum { get; }

    /// <summary>Gets the largest value allowed.</summary>
    public TimeSpan Maximum { get; }

    /// <summary>Gets whether <paramref name="value"/> is in range; <see langword="null"/> is, as for <see cref="RangeAttribute"/> (<see cref="RequiredAttribute"/> says otherwise).</summary>
    public override bool IsValid(object? value) => value is null || (value is TimeSpan time && time >= Minimum && time <= Maximum);

    /// <inheritdoc />
    public override string FormatErrorMessage(string name) => string.Format(CultureInfo.CurrentCulture, ErrorMessageString, name, Minimum, Maximum);
}
