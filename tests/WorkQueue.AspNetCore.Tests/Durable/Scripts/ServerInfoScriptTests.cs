using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>serverInfo.lua called directly through <see cref="ServerInfoCall"/> on a real redis-server: what the startup checks read, and what a user without INFO gets.</summary>
public sealed class ServerInfoScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task ServerInfo_Allowed_ReturnsTheVersionAndTheThreeSections_AndWritesNothing()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");

        var reply = await ServerInfoCall.RunAsync(db, keys);

        string info = reply.Info!;
        Assert.Equal(client.GetServer(client.GetEndPoints()[0]).Version.ToString(3), reply.Version);
        Assert.Contains("# Server", info, StringComparison.Ordinal);
        Assert.Contains("# Memory", info, StringComparison.Ordinal);
        Assert.Contains("# Persistence", info, StringComparison.Ordinal);
        Assert.Equal(new RedisServerSettings(reply.Version, "noeviction", "0", AppendOnly: false), RedisServerSettings.Parse(reply.Version, info));
        Assert.Null(reply.InfoRefusal);
        Assert.Equal(string.Empty, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task ServerInfo_InfoRefusedByAcl_ReturnsTheVersionAndRedissRefusal()
    {
        await using var admin = await DurableTestHost.ConnectAsync(redis.Server);
        string user = "noinfo" + Guid.NewGuid().ToString("N")[..6];
        await admin.GetServer(admin.GetEndPoints()[0]).ExecuteAsync("ACL", "SETUSER", user, "on", ">secret", "~*", "&*", "+@all", "-info");
        await using var client = await ConnectionMultiplexer.ConnectAsync($"{redis.Server.Configuration},user={user},password=secret");

        var reply = await ServerInfoCall.RunAsync(client.GetDatabase(), new RedisStreamKeys("p", "q"));

        Assert.NotNull(reply.Version);
        Assert.Null(reply.Info);
        Assert.Contains("can't run this command", reply.InfoRefusal, StringComparison.Ordinal);
    }

    [Fact]
    public async Task ServerInfo_KeysOutsideTheUsersPattern_RedisRefusesTheCall()
    {
        await using var admin = await DurableTestHost.ConnectAsync(redis.Server);
        string user = "nokeys" + Guid.NewGuid().ToString("N")[..6];
        await admin.GetServer(admin.GetEndPoints()[0]).ExecuteAsync("ACL", "SETUSER", user, "on", ">secret", "~other:*", "&*", "+@all");
        await using var client = await ConnectionMultiplexer.ConnectAsync($"{redis.Server.Configuration},user={user},password=secret");

        var error = await Assert.ThrowsAsync<RedisServerException>(() => ServerInfoCall.RunAsync(client.GetDatabase(), new RedisStreamKeys(DurableTestHost.NewPrefix(), "q")));

        Assert.StartsWith("NOPERM", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("a|b")]
    [InlineData("a\u0001b")]
    [InlineData("{q}")]
    public async Task ServerInfo_StreamKeyOfAnotherTypeAndHostileName_ReadsAsUsual_AndLeavesTheKeyAlone(string name)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), name);
        await db.StringSetAsync(keys.Stream, "not a stream");

        var reply = await ServerInfoCall.RunAsync(db, keys);

        Assert.NotNull(reply.Info);
        Assert.Null(reply.InfoRefusal);
        Assert.Equal("not a stream", (string?)await db.StringGetAsync(keys.Stream));
    }
}
