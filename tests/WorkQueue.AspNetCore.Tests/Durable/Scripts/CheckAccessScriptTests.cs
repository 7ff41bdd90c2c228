using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>checkAccess.lua called directly through <see cref="CheckAccessCall"/>, on a real redis-server, as users with and without what a durable queue needs.</summary>
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
    [InlineData("a|b")]
    [InlineData("a\u0001b")]
    [InlineData("a\u001fb")]
    [InlineData("{q}")]
    [InlineData("")]
    public async Task CheckAccess_ProbesOnHostileKeys_AllowedUnderThePrefixRefusedOutsideIt_AndWritesNothing(string name)
    {
        string prefix = DurableTestHost.NewPrefix();
        var keys = new RedisStreamKeys(prefix, "q");
        await using var user = await ConnectAsUserAsync(DurableAcl.Rules(prefix));
        string huge = new('x', 1 << 20);
        AccessProbe[] probes =
        [
            new("+set", ["SET", $"{prefix}:{name}", huge]),
            new("+set", ["SET", $"other:{name}", huge]),
            new("+get", ["GET", $"{prefix}:{name}"]),
            new("+hset", ["HSET", keys.EndedRecords!, name, huge]),
            new("+get", ["GET", name]),
        ];

        var reply = await CheckAccessCall.RunAsync(user.GetDatabase(), keys, probes);

        // The ACL decides on the key's name alone: separators, braces and an empty name are just characters to it.
        Assert.True(reply.Checked);
        Assert.Equal([2, 5], reply.Refused);
        await using var admin = await DurableTestHost.ConnectAsync(redis.Server);
        Assert.Equal(string.Empty, await ScriptState.SnapshotAsync(admin.GetDatabase(), keys));
        Assert.False(await admin.GetDatabase().KeyExistsAsync($"{prefix}:{name}"));
    }

    [Fact]
    public async Task CheckAccess_QueueKeysOfAnotherType_AnswersAsBefore_WithoutTouchingThem()
    {
        string prefix = DurableTestHost.NewPrefix();
        var keys = new RedisStreamKeys(prefix, "q");
        await using var admin = await DurableTestHost.ConnectAsync(redis.Server);
        await admin.GetDatabase().StringSetAsync(keys.Stream, "not a stream");
        await admin.GetDatabase().StringSetAsync(keys.Delayed, "not a sorted set");
        await using var user = await ConnectAsUserAsync(DurableAcl.Rules(prefix) + " -xack");
        var probes = DurableAcl.Probes(keys, prefix, consume: false);

        var reply = await CheckAccessCall.RunAsync(user.GetDatabase(), keys, probes);

        Assert.Equal([probes.Select((p, i) => (p, i)).Single(x => x.p.Rules == "+xack").i + 1], reply.Refused);
        Assert.Equal("not a stream", (string?)await admin.GetDatabase().StringGetAsync(keys.Stream));
        Assert.Equal("not a sorted set", (string?)await admin.GetDatabase().StringGetAsync(keys.Delayed));
    }

    [Fact]
    public void Arguments_EachProbe_ItsWordCountThenItsWords()
    {
        AccessProbe[] probes = [new("+ping", ["PING"]), new("+get", ["GET", "k"]), new("+xack", ["XACK", "s", "g", "0-1"])];

        var args = CheckAccessCall.Arguments(probes);

        Assert.Equal(["1", "PING", "2", "GET", "k", "4", "XACK", "s", "g", "0-1"], args.Select(a => (string?)a));
    }

    [Theory]
    [InlineData("x", "PING")]
    [InlineData("0", "PING")]
    [InlineData("3", "PING")]
    public async Task CheckAccess_MalformedWordCount_FailsNamingTheProbe(string count, string word)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);

        // Crafted ARGV: the builder always writes a probe's true word count.
        var error = await Assert.ThrowsAsync<RedisServerException>(() => client.GetDatabase().ScriptEvaluateAsync(DurableScripts.CheckAccess, [], ["1", "PING", count, word]));

        Assert.Contains("probe 2", error.Message, StringComparison.Ordinal);
    }

    private static async Task<int[]> CheckAsync(IDatabase db, RedisStreamKeys keys, IReadOnlyList<AccessProbe> probes)
    {
        var reply = await CheckAccessCall.RunAsync(db, keys, probes);
        Assert.True(reply.Checked);
        return reply.Refused;
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
