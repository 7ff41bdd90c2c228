using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>status.lua called directly with crafted keys and arguments, on a real redis-server.</summary>
public sealed class StatusScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task Status_RetriedJobByEitherOfItsIds_ReadsTheJobAndNamesIt()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var (e1, e2) = await ScriptState.RetriedAsync(db, keys, "k");

        // Queued at E2, with the job's record (its failed attempt), whichever id is asked; the last element names the job.
        foreach (string id in new[] { e1, e2 })
        {
            var reply = Status(db, keys, id);
            Assert.Equal("Q", (string?)reply[0]);
            Assert.Contains("\u001fboom", (string?)reply[1], StringComparison.Ordinal);
            Assert.Equal(e2, (string?)reply[2]);
            Assert.Equal(e1, (string?)reply[^1]);
        }

        // Delivered: read as pending by either id.
        Assert.Equal([e2], await ScriptState.DeliverAsync(db, keys));
        foreach (string id in new[] { e1, e2 })
        {
            var reply = Status(db, keys, id);
            Assert.Equal(("P", e2, ScriptState.Consumer, e1), ((string?)reply[0], (string?)reply[2], (string?)reply[4], (string?)reply[^1]));
        }
    }

    [Fact]
    public async Task Status_FirstAttemptQueuedAndScheduled_NamesTheJobItself()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        string id = (string)(await db.StreamAddAsync(keys.Stream, [new("p", "{}"), new("t", "1000")]))!;
        await db.SortedSetAddAsync(keys.Delayed, "s5-1|1|1000|{}", 5_000_000_000_000);
        await db.HashSetAsync(keys.Scheduled, "s5-1", "s5-1|1|1000|{}");

        var queued = Status(db, keys, id);
        var scheduled = Status(db, keys, "s5-1");

        Assert.Equal(("Q", id, id), ((string?)queued[0], (string?)queued[2], (string?)queued[^1]));
        Assert.Equal(("S", "5000000000000", "s5-1"), ((string?)scheduled[0], (string?)scheduled[2], (string?)scheduled[^1]));
    }

    [Theory]
    [InlineData("99999999999999999999999-0")]
    [InlineData("1-99999999999999999999999")]
    [InlineData("nope")]
    [InlineData("")]
    [InlineData("stream")]
    [InlineData("key:k")]
    public async Task Status_UnknownOrHostileId_AnswersUnknown(string id)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await ScriptState.RetriedAsync(db, keys, "k");

        Assert.Equal([""], Status(db, keys, id).Select(r => (string?)r));
    }

    [Theory]
    [InlineData("not-an-id")]
    [InlineData("99999999999999999999999-0")]
    [InlineData("zNaN")]
    public async Task Status_LocationSetByHandToNonsense_AnswersUnknown(string where)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await db.StringSetAsync(keys.JobLocation("1-1"), where);

        Assert.Equal([""], Status(db, keys, "1-1").Select(r => (string?)r));
    }

    private static RedisResult[] Status(IDatabase db, RedisStreamKeys keys, string id) =>
        (RedisResult[])db.ScriptEvaluate(DurableScripts.Status, [keys.Stream, keys.Delayed, keys.Scheduled], [RedisStreamKeys.Group, id])!;
}
