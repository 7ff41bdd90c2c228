using Microsoft.Extensions.DependencyInjection;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>A durable queue's dead letters put back on the queue, on a real redis-server: a requeue honours the capacity as an enqueue does.</summary>
public sealed class DurableDeadLetterTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task RequeueDeadLetterAsync_QueueAtCapacity_RefusedAndTheDeadLettersKept()
    {
        var log = new JobLog();
        await using var producer = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), "p", configure: o => o.Capacity = 2, configureDurable: d => d.Consume = false);
        var store = producer.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single().Store;
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        await producer.Producer.EnqueueAsync(new TestJob(1));
        await producer.Producer.EnqueueAsync(new TestJob(2));
        var dead = new List<string>();
        for (int n = 0; n < 5; n++)
        {
            dead.Add((string)(await db.StreamAddAsync(store.Keys.Dead, [new("j", $"1-{n}"), new("p", "{\"n\":9}"), new("a", "3"), new("t", "1000"), new("e", "boom"), new("r", "failed"), new("f", "1002")]))!);
        }

        foreach (string id in dead)
        {
            Assert.Equal(new DeadLetterRequeue(null, QueueFull: true), await store.Jobs.RequeueDeadLetterAsync(id));
        }

        Assert.Equal(2, await db.StreamLengthAsync(store.Keys.Stream));
        Assert.Equal(5, await db.StreamLengthAsync(store.Keys.Dead));

        // An unknown dead letter is not found, full or not; with room, a requeue adds its job again.
        Assert.True((await store.Jobs.RequeueDeadLetterAsync("1-0")).NotFound);
        await db.StreamDeleteAsync(store.Keys.Stream, [(await db.StreamRangeAsync(store.Keys.Stream, count: 1))[0].Id]);
        var requeued = await store.Jobs.RequeueDeadLetterAsync(dead[0]);
        Assert.Matches(@"^\d+-\d+$", requeued.NewId);
        Assert.Equal(new DeadLetterRequeue(null, QueueFull: true), await store.Jobs.RequeueDeadLetterAsync(dead[1]));
        Assert.Equal(4, await db.StreamLengthAsync(store.Keys.Dead));
    }
}
