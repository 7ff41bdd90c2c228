using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>serverInfo.lua called directly on a real redis-server: what the startup checks read, and what a user without INFO gets.</summary>
public sealed class ServerInfoScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task ServerInfo_Allowed_ReturnsTheVersionAndTheThreeSections_AndWritesNothing()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");

        var reply = (RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.ServerInfo, [keys.Stream]))!;

        string info = (string)reply[1]!;
        Assert.Equal(client.GetServer(client.GetEndPoints()[0]).Version.ToString(3), (string?)reply[0]);
        Assert.Contains("# Server", info, StringComparison.Ordinal);
        Assert.Contains("# Memory", info, StringComparison.Ordinal);
        Assert.Contains("# Persistence", info, StringComparison.Ordinal);
        Assert.Equal(new RedisServerSettings((string?)reply[0], "noeviction", "0", AppendOnly: false), RedisServerSettings.Parse((string?)reply[0], info));
        Assert.True(reply[2].IsNull);
        Assert.Equal(string.Empty, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task ServerInfo_InfoRefusedByAcl_ReturnsTheVersionAndRedissRefusal()
    {
        await using var admin = await DurableTestHost.ConnectAsync(redis.Server);
        string user = "noinfo" + Guid.NewGuid().ToString("N")[..6];
        await admin.GetServer(admin.GetEndPoints()[0]).ExecuteAsync("ACL", "SETUSER", user, "on", ">secret", "~*", "&*", "+@all", "-info");
        await using var client = await ConnectionMultiplexer.ConnectAsync($"{redis.Server.Configuration},user={user},password=secret");

        var reply = (RedisResult[])(await client.GetDatabase().ScriptEvaluateAsync(DurableScripts.ServerInfo, [new RedisStreamKeys("p", "q").Stream]))!;

        Assert.False(reply[0].IsNull);
        Assert.True(reply[1].IsNull);
        Assert.Contains("can't run this command", (string?)reply[2], StringComparison.Ordinal);
    }
}
