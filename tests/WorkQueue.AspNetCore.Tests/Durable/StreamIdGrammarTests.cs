using WorkQueue.AspNetCore.Durable;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>The ids a durable queue accepts back: stream ids as Redis writes them, and scheduled jobs' <c>s</c>-ids.</summary>
public sealed class StreamIdGrammarTests
{
    [Theory]
    [InlineData("0-0")]
    [InlineData("0-1")]
    [InlineData("1732500000000-0")]
    [InlineData("1732500000000-42")]
    [InlineData("18446744073709551615-18446744073709551615")]
    public void IsStreamId_AsRedisWritesThem_True(string id)
    {
        Assert.True(StreamIdGrammar.IsStreamId(id));
        Assert.True(StreamIdGrammar.IsJobId(id));
        Assert.True(StreamIdGrammar.IsJobId("s" + id));
    }

    [Theory]
    [InlineData("")]
    [InlineData("-")]
    [InlineData("1")]
    [InlineData("1-")]
    [InlineData("-1")]
    [InlineData("1--1")]
    [InlineData("1-1-1")]
    [InlineData("18446744073709551616-0")]
    [InlineData("0-18446744073709551616")]
    [InlineData("99999999999999999999-0")]
    [InlineData("100000000000000000000-0")]
    [InlineData("01-0")]
    [InlineData("1-00")]
    [InlineData("+1-0")]
    [InlineData("-1-0")]
    [InlineData(" 1-0")]
    [InlineData("1-0 ")]
    [InlineData("1 -0")]
    [InlineData("1.0-0")]
    [InlineData("1e3-0")]
    [InlineData("０-0")]
    [InlineData("1-*")]
    [InlineData("(1-0")]
    public void IsStreamId_AnythingElse_False(string id)
    {
        Assert.False(StreamIdGrammar.IsStreamId(id));
        Assert.False(StreamIdGrammar.IsJobId(id));
        Assert.False(StreamIdGrammar.IsJobId("s" + id));
    }

    [Theory]
    [InlineData(null)]
    [InlineData("s")]
    [InlineData("ss1-0")]
    [InlineData("S1-0")]
    [InlineData("x1-0")]
    [InlineData("s18446744073709551615-18446744073709551615x")]
    public void IsJobId_NotAJobId_False(string? id) => Assert.False(StreamIdGrammar.IsJobId(id));
}
