using WorkQueue.AspNetCore.Durable;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>How the startup checks judge what a server reported (pure logic; the servers themselves are in <see cref="DurableServerChecksTests"/>).</summary>
public sealed class RedisServerSettingsTests
{
    [Fact]
    public void Parse_InfoSections_ReadsVersionPolicyMaxMemoryAndAof()
    {
        const string Info = "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n\r\n# Memory\r\nmaxmemory:1048576\r\nmaxmemory_policy:allkeys-lru\r\n# Persistence\r\naof_enabled:1\r\n";

        var settings = RedisServerSettings.Parse(scriptVersion: null, Info);

        Assert.Equal(new RedisServerSettings("7.0.15", "allkeys-lru", "1048576", AppendOnly: true), settings);
    }

    [Fact]
    public void Parse_ScriptVersion_IsPreferredToInfos()
    {
        Assert.Equal("7.2.4", RedisServerSettings.Parse("7.2.4", "redis_version:6.0.0\r\n").Version);
    }

    [Theory]
    [InlineData("6.2.14")]
    [InlineData("6.0")]
    [InlineData("5.0.7")]
    [InlineData("unknown")]
    public void Risks_VersionBefore70_NamesTheVersion(string version)
    {
        var risk = Assert.Single(new RedisServerSettings(version, "noeviction", "0", AppendOnly: true).Risks());

        Assert.Equal("version", risk.Setting);
        Assert.Equal(version, risk.Value);
        Assert.Contains("7.0", risk.Remedy, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("7.0.0")]
    [InlineData("7.0")]
    [InlineData("7.2.4-v1")]
    [InlineData("8.0.2")]
    public void Risks_Version70OrLater_None(string version)
    {
        Assert.Empty(new RedisServerSettings(version, "noeviction", "0", AppendOnly: true).Risks());
    }

    [Theory]
    [InlineData("allkeys-lru")]
    [InlineData("allkeys-lfu")]
    [InlineData("allkeys-random")]
    [InlineData("volatile-lru")]
    [InlineData("volatile-lfu")]
    [InlineData("volatile-random")]
    [InlineData("volatile-ttl")]
    public void Risks_EvictingPolicy_NamesThePolicyAndTheLimit(string policy)
    {
        var risk = Assert.Single(new RedisServerSettings("7.0.15", policy, "104857600", AppendOnly: true).Risks());

        Assert.Equal("maxmemory-policy", risk.Setting);
        Assert.Equal(policy, risk.Value);
        Assert.Contains("104857600 bytes", risk.Consequence, StringComparison.Ordinal);
        Assert.Contains("noeviction", risk.Remedy, StringComparison.Ordinal);
    }

    [Fact]
    public void Risks_AppendOnlyOff_NamesTheSetting()
    {
        var risk = Assert.Single(new RedisServerSettings("7.0.15", "noeviction", "0", AppendOnly: false).Risks());

        Assert.Equal(("appendonly", "no"), (risk.Setting, risk.Value));
        Assert.Contains("appendonly yes", risk.Remedy, StringComparison.Ordinal);
    }

    [Fact]
    public void Risks_NothingReported_NoneJudged()
    {
        Assert.Empty(new RedisServerSettings(null, null, null, null).Risks());
    }

    [Fact]
    public void Risks_EveryRisk_EachNamed()
    {
        var risks = new RedisServerSettings("6.2.0", "allkeys-lru", "0", AppendOnly: false).Risks();

        Assert.Equal(["version", "maxmemory-policy", "appendonly"], risks.Select(r => r.Setting));
    }
}
