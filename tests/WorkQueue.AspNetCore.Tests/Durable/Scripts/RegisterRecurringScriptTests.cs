using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>registerRecurring.lua called directly with crafted keys and arguments, on a real redis-server.</summary>
public sealed class RegisterRecurringScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Theory]
    [InlineData("@x")]
    [InlineData("~x")]
    public async Task Register_IdThatNamesAnotherJobsField_RefusedWithoutWriting(string id)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        Register(db, keys, "x", "c", "every 00:00:01 (UTC)");
        await db.HashSetAsync(keys.Recurring, "x", "1000");
        string before = await ScriptState.SnapshotAsync(db, keys);

        foreach (string change in new[] { "c", "r", "x" })
        {
            var ex = Assert.Throws<RedisServerException>(() => Register(db, keys, id, change, "every 00:00:02 (UTC)"));
            Assert.Contains("recurring job id", ex.Message, StringComparison.Ordinal);
        }

        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Fact]
    public async Task Register_InCodeThenRemovedAtRuntime_WritesTheScheduleFieldAndLiftsThePause()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await db.HashSetAsync(keys.Recurring, "~x", "1");

        var registered = Register(db, keys, "x", "c", "every 00:00:01 (UTC)");
        var removed = Register(db, keys, "x", "x", "every 00:00:01 (UTC)");

        Assert.Equal(("1", "c"), ((string?)registered[0], (string?)registered[1]));
        Assert.Equal(("2", "x", "every 00:00:01 (UTC)"), ((string?)removed[0], (string?)removed[1], (string?)removed[2]));
        Assert.Equal("2|x|every 00:00:01 (UTC)|every 00:00:01 (UTC)", (string?)await db.HashGetAsync(keys.Recurring, "@x"));
        Assert.False(await db.HashExistsAsync(keys.Recurring, "~x"));
    }

    private static RedisResult[] Register(IDatabase db, RedisStreamKeys keys, string id, string change, string schedule) =>
        (RedisResult[])db.ScriptEvaluate(DurableScripts.RegisterRecurring, [keys.Recurring], [id, change, schedule])!;
}
