using System.Diagnostics;
using StackExchange.Redis;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.TestSupport;

/// <summary>The Cluster fixture (<c>tests/Shared/RedisCluster.cs</c>) starts a cluster and moves a slot as the cluster tests rely on.</summary>
public sealed class RedisClusterTests
{
    [Fact]
    public async Task MoveSlotAsync_SlotWithKeysAndAStreamGroup_AnotherMasterOwnsItWithEverything()
    {
        var clock = Stopwatch.StartNew();
        await using var cluster = await RedisCluster.StartAsync();
        var started = clock.Elapsed;
        Assert.Equal(3, cluster.Masters.Count);
        Assert.Equal(3, cluster.Replicas.Count);
        foreach (var replica in cluster.Replicas)
        {
            Assert.Equal("slave", await replica.InfoFieldAsync("replication", "role"));
        }

        await using var client = await ConnectionMultiplexer.ConnectAsync(cluster.Configuration);
        var db = client.GetDatabase();
        const string Tag = "{fixture}";
        for (int i = 0; i < 250; i++)
        {
            await db.StringSetAsync($"{Tag}:key:{i}", i);
        }

        await db.StreamCreateConsumerGroupAsync($"{Tag}:stream", "workers", StreamPosition.NewMessages);
        await db.StreamAddAsync($"{Tag}:stream", "n", 1);
        Assert.Single(await db.StreamReadGroupAsync($"{Tag}:stream", "workers", "c", StreamPosition.NewMessages));

        int slot = await cluster.SlotOfAsync(Tag);
        Assert.Equal(slot, await cluster.SlotOfAsync($"{Tag}:stream"));
        var source = await cluster.MasterOfAsync(slot);
        var target = cluster.Masters.First(m => m != source);

        var move = await cluster.MoveSlotAsync(slot, target, batch: 100);

        Assert.Equal(251, move.Keys);
        Assert.Equal(3, move.Batches);
        Assert.Same(target, await cluster.MasterOfAsync(slot));
        Assert.Equal("0", await source.CommandAsync("CLUSTER", "COUNTKEYSINSLOT", slot.ToString()));
        Assert.Equal("251", await target.CommandAsync("CLUSTER", "COUNTKEYSINSLOT", slot.ToString()));
        for (int i = 0; i < 250; i++)
        {
            Assert.Equal(i, (int)await db.StringGetAsync($"{Tag}:key:{i}"));
        }

        Assert.Equal(1, (await db.StreamPendingAsync($"{Tag}:stream", "workers")).PendingMessageCount);
        await db.StringSetAsync($"{Tag}:after", "written");
        Assert.Equal("written", await target.CommandAsync("GET", $"{Tag}:after"));
        TestContext.Current.TestOutputHelper?.WriteLine(
            $"started in {started.TotalMilliseconds:F0} ms; moved slot {slot} ({move.Keys} keys, {move.Batches} batches) in {move.Migrated.TotalMilliseconds:F0} ms");
    }
}
