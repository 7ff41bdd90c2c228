using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>checkAccess.lua called directly, on a real redis-server, as users with and without what a durable queue needs.</summary>
public sealed class CheckAccessScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task CheckAccess_UserWithTheDocumentedAcl_RefusesNothing_AndWritesNothing()
    {
        string prefix = DurableTestHost.NewPrefix();
        var keys = new RedisStreamKeys(prefix, "q");
        await using var user = await ConnectAsUserAsync(DurableAcl.Rules(prefix));

        var refused = await CheckAsync(user.GetDatabase(), keys, DurableAcl.Probes(keys, prefix, consume: true));

        Assert.Empty(refused);
        await using var admin = await DurableTestHost.ConnectAsync(redis.Server);
        Assert.Equal(string.Empty, await ScriptState.SnapshotAsync(admin.GetDatabase(), keys));
    }

    [Fact]
    public async Task CheckAccess_CommandsAndAChannelRefused_AnswersExactlyTheirProbes()
    {
        string prefix = DurableTestHost.NewPrefix();
        var keys = new RedisStreamKeys(prefix, "q");
        await using var user = await ConnectAsUserAsync(DurableAcl.Rules(prefix) + " -xack -xgroup|create resetchannels");
        var probes = DurableAcl.Probes(keys, prefix, consume: true);

        var refused = await CheckAsync(user.GetDatabase(), keys, probes);

        // XACK, XGROUP CREATE, and every publish and subscribe (no channel is left).
        var expected = Enumerable.Range(1, probes.Count).Where(n => probes[n - 1].Rules is "+xack" or "+xgroup|create" || probes[n - 1].Rules.Contains('&'));
        Assert.Equal(expected, refused);
        Assert.Equal(5, refused.Length);
    }

    [Fact]
    public async Task CheckAccess_KeysOutsideTheUsersPattern_RedisRefusesTheCallNamingKeys()
    {
        string prefix = DurableTestHost.NewPrefix();
        var keys = new RedisStreamKeys(prefix, "q");
        await using var user = await ConnectAsUserAsync(DurableAcl.Rules("other"));

        var error = await Assert.ThrowsAsync<RedisServerException>(() => CheckAsync(user.GetDatabase(), keys, DurableAcl.Probes(keys, prefix, consume: true)));

        Assert.StartsWith("NOPERM", error.Message, StringComparison.Ordinal);
        Assert.Contains("keys", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task CheckAccess_UnknownCommand_CountsAsRefused()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "q");

        var refused = await CheckAsync(client.GetDatabase(), keys, [new("+ping", ["PING"]), new("+nosuch", ["NOSUCHCOMMAND", "x"]), new("+get", ["GET", "k"])]);

        Assert.Equal([2], refused);
    }

    [Theory]
    [InlineData("x", "PING")]
    [InlineData("0", "PING")]
    [InlineData("3", "PING")]
    public async Task CheckAccess_MalformedWordCount_FailsNamingTheProbe(string count, string word)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);

        var error = await Assert.ThrowsAsync<RedisServerException>(() => client.GetDatabase().ScriptEvaluateAsync(DurableScripts.CheckAccess, [], ["1", "PING", count, word]));

        Assert.Contains("probe 2", error.Message, StringComparison.Ordinal);
    }

    private static async Task<int[]> CheckAsync(IDatabase db, RedisStreamKeys keys, IReadOnlyList<AccessProbe> probes)
    {
        var args = probes.SelectMany(p => new[] { (RedisValue)p.Command.Count }.Concat(p.Command.Select(w => (RedisValue)w))).ToArray();
        var reply = await db.ScriptEvaluateAsync(DurableScripts.CheckAccess, [.. DurableAcl.AccessKeys(keys).Select(k => (RedisKey)k)], args);
        return [.. ((RedisResult[])reply!).Select(r => (int)r)];
    }

    private async Task<ConnectionMultiplexer> ConnectAsUserAsync(string rules)
    {
        string user = "chk" + Guid.NewGuid().ToString("N")[..8];
        await using (var admin = await DurableTestHost.ConnectAsync(redis.Server))
        {
            await admin.GetServer(admin.GetEndPoints()[0]).ExecuteAsync("ACL", ["SETUSER", user, "reset", "on", ">pw", .. rules.Split(' ')]);
        }

        return await ConnectionMultiplexer.ConnectAsync($"{redis.Server.Configuration},user={user},password=pw");
    }
}
