using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Durability;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>registerRecurring.lua called directly through <see cref="RegisterRecurringCall"/> with crafted keys and arguments, on a real redis-server.</summary>
public sealed class RegisterRecurringScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const string EverySecond = "every 00:00:01 (UTC)";
    private const string EveryTwoSeconds = "every 00:00:02 (UTC)";

    [Theory]
    [InlineData("@x")]
    [InlineData("~x")]
    [InlineData("")]
    public async Task Register_IdThatNamesAnotherJobsField_RefusedWithoutWriting(string id)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        Register(db, keys, "x", RecurringScheduleChange.Registered, EverySecond);
        await db.HashSetAsync(keys.Recurring, "x", "1000");
        string before = await ScriptState.SnapshotAsync(db, keys);

        foreach (var change in new[] { RecurringScheduleChange.Registered, RecurringScheduleChange.Changed, RecurringScheduleChange.Removed })
        {
            var ex = Assert.Throws<RedisServerException>(() => Register(db, keys, id, change, EveryTwoSeconds));
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

        var registered = Register(db, keys, "x", RecurringScheduleChange.Registered, EverySecond);
        var removed = Register(db, keys, "x", RecurringScheduleChange.Removed, EverySecond);

        Assert.Equal((1L, "c", RecurringScheduleChange.Registered, EverySecond), (registered.Generation, registered.State, registered.Change, registered.Schedule));
        Assert.Equal((2L, "x", RecurringScheduleChange.Removed, EverySecond), (removed.Generation, removed.State, removed.Change, removed.Schedule));
        Assert.Equal("2|x|every 00:00:01 (UTC)|every 00:00:01 (UTC)", (string?)await db.HashGetAsync(keys.Recurring, "@x"));
        Assert.False(await db.HashExistsAsync(keys.Recurring, "~x"));
    }

    [Fact]
    public async Task Register_SameScheduleInCodeAgain_WritesNothingAndAnswersTheStoredOne()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        Register(db, keys, "x", RecurringScheduleChange.Registered, EverySecond);
        var changed = Register(db, keys, "x", RecurringScheduleChange.Changed, EveryTwoSeconds);
        string before = await ScriptState.SnapshotAsync(db, keys);

        // A restart registers the schedule in code the runtime change overrode: the runtime change stays.
        var again = Register(db, keys, "x", RecurringScheduleChange.Registered, EverySecond);

        Assert.Equal((2L, RecurringScheduleChange.Changed, EveryTwoSeconds), (changed.Generation, changed.Change, changed.Schedule));
        Assert.Equal((2L, RecurringScheduleChange.Changed, EveryTwoSeconds), (again.Generation, again.Change, again.Schedule));
        Assert.InRange(again.RedisTimeMs, DateTimeOffset.UtcNow.AddMinutes(-10).ToUnixTimeMilliseconds(), DateTimeOffset.UtcNow.AddMinutes(10).ToUnixTimeMilliseconds());
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    [Theory]
    [InlineData("a|b")]
    [InlineData("{q}")]
    [InlineData("x\u0001y\u001fz")]
    public async Task Register_IdWithSeparatorsOrBraces_WritesItsOwnScheduleField(string id)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);

        var reply = Register(db, keys, id, RecurringScheduleChange.Changed, "0 */5 * * * (UTC)");

        Assert.Equal((1L, "r", "0 */5 * * * (UTC)"), (reply.Generation, reply.State, reply.Schedule));
        Assert.Equal("1|r|0 */5 * * * (UTC)|", (string?)await db.HashGetAsync(keys.Recurring, "@" + id));
    }

    [Fact]
    public async Task Register_RecurringKeyOfAnotherType_FailsWithRedisErrorWithoutWriting()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await db.StringSetAsync(keys.Recurring, "not a hash");
        string before = await ScriptState.SnapshotAsync(db, keys);

        var error = Assert.Throws<RedisServerException>(() => Register(db, keys, "x", RecurringScheduleChange.Registered, EverySecond));

        Assert.Contains("WRONGTYPE", error.Message, StringComparison.Ordinal);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }

    private static RegisterRecurringReply Register(IDatabase db, RedisStreamKeys keys, string id, RecurringScheduleChange change, string schedule) =>
        RegisterRecurringCall.Run(db, keys, id, change, schedule);
}
