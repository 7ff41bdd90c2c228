using System.ComponentModel.DataAnnotations;
using WorkQueue.Validation;

namespace WorkQueue.Core.Tests.Validation;

public sealed class TimeSpanRangeAttributeTests
{
    [Theory]
    [InlineData("00:00:00.010", true)]
    [InlineData("00:00:30", true)]
    [InlineData("00:01:00", true)]
    [InlineData("00:00:00.009", false)]
    [InlineData("00:01:00.001", false)]
    [InlineData("-00:00:01", false)]
    public void IsValid_BoundsIncluded_AsRangeAttribute(string value, bool expected)
    {
        var attribute = new TimeSpanRangeAttribute("00:00:00.010", "00:01:00");
        var range = new RangeAttribute(typeof(TimeSpan), "00:00:00.010", "00:01:00");

        Assert.Equal(expected, attribute.IsValid(TimeSpan.Parse(value)));
        Assert.Equal(range.IsValid(TimeSpan.Parse(value)), attribute.IsValid(TimeSpan.Parse(value)));
    }

    [Fact]
    public void FormatErrorMessage_OutOfRange_SaysWhatRangeAttributeSays()
    {
        var attribute = new TimeSpanRangeAttribute("00:00:00.010", "1.00:00:00");
        var range = new RangeAttribute(typeof(TimeSpan), "00:00:00.010", "1.00:00:00");
        range.IsValid(TimeSpan.Zero);

        Assert.Equal(range.FormatErrorMessage("JobTimeout"), attribute.FormatErrorMessage("JobTimeout"));
    }

    [Fact]
    public void IsValid_Null_IsValidAsForRangeAttribute()
    {
        Assert.True(new TimeSpanRangeAttribute("00:00:01", "00:00:02").IsValid(null));
    }
}
