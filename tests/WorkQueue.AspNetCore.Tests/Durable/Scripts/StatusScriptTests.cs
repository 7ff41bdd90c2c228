using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>status.lua called directly through <see cref="StatusCall"/> with crafted keys and arguments, on a real redis-server.</summary>
public sealed class StatusScriptTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task Status_RetriedJobByEitherOfItsIds_ReadsTheJobAndNamesIt()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var (e1, e2) = await ScriptState.RetriedAsync(db, keys, "k");

        // Queued at E2 (attempt 2), with the job's record (its failed attempt), whichever id is asked; named as the job.
        foreach (string id in new[] { e1, e2 })
        {
            var reply = Status(db, keys, id);
            Assert.Equal((StatusKind.Queued, e1, e2, 2), (reply.Kind, reply.JobId, reply.Entry?.StreamId, reply.Entry?.Attempt));
            var failed = Assert.Single(reply.Record.History);
            Assert.Equal((1, "c1", "boom"), (failed.Number, failed.WorkerName, failed.Error));
            Assert.Null(reply.Consumer);
        }

        // Delivered: read as running by either id, with its consumer and one delivery.
        Assert.Equal([e2], await ScriptState.DeliverAsync(db, keys));
        foreach (string id in new[] { e1, e2 })
        {
            var reply = Status(db, keys, id);
            Assert.Equal((StatusKind.Running, e1, e2, ScriptState.Consumer, 1L), (reply.Kind, reply.JobId, reply.Entry?.StreamId, reply.Consumer, reply.Entry?.Deliveries));
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

        Assert.Equal((StatusKind.Queued, id, id, '\0'), (queued.Kind, queued.JobId, queued.Entry?.StreamId, queued.Record.State));
        Assert.Equal(
            (StatusKind.Scheduled, "s5-1", DateTimeOffset.FromUnixTimeMilliseconds(5_000_000_000_000), 1, DateTimeOffset.FromUnixTimeMilliseconds(1000)),
            (scheduled.Kind, scheduled.JobId, scheduled.Due, scheduled.Attempt, scheduled.EnqueuedAt));
    }

    [Fact]
    public async Task Status_EndedJob_ReadsItsRecord()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        await db.HashSetAsync(keys.EndedRecords, "7-1", "D\u001f\u001f1003\u001f3\u001f1000\u001fc1\u001f1002\u001fboom");

        var reply = Status(db, keys, "7-1");

        Assert.Equal((StatusKind.Ended, "7-1", 'D', 3, "c1", "boom"), (reply.Kind, reply.JobId, reply.Record.State, reply.Record.Attempt, reply.Record.Consumer, reply.Record.Error));
        Assert.Equal(DateTimeOffset.FromUnixTimeMilliseconds(1003), reply.Record.At);
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

        var reply = Status(db, keys, id);

        Assert.Equal((StatusKind.Unknown, null), (reply.Kind, reply.JobId));
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

        Assert.Equal(StatusKind.Unknown, Status(db, keys, "1-1").Kind);
    }

    private static StatusReply Status(IDatabase db, RedisStreamKeys keys, string id) => StatusCall.Run(db, keys, id);
}
