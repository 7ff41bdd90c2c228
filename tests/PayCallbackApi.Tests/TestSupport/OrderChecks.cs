using PayCallbackApi.Orders;
using StackExchange.Redis;

namespace PayCallbackApi.Tests.TestSupport;

/// <summary>What the sample left in Redis, read directly: its counters and the orders' effects.</summary>
internal static class OrderChecks
{
    /// <summary>Gets <c>pay:stats:accepted</c> and <c>pay:stats:completed</c>.</summary>
    public static async Task<(long Accepted, long Completed)> CountersAsync(RedisServer redis)
    {
        await using var mux = await ConnectionMultiplexer.ConnectAsync(redis.Configuration);
        var values = await mux.GetDatabase().StringGetAsync([OrderStore.StatsAccepted, OrderStore.StatsCompleted]);
        return ((long)values[0], (long)values[1]);
    }

    /// <summary>The orders among <paramref name="orderIds"/> that are not Paid with all four effects recorded.</summary>
    public static async Task<List<string>> IncompleteAsync(RedisServer redis, string[] orderIds)
    {
        await using var mux = await ConnectionMultiplexer.ConnectAsync(redis.Configuration);
        var db = mux.GetDatabase();
        RedisValue[] fields = ["status", .. OrderStore.Effects.Select(e => (RedisValue)e)];
        var orders = await Task.WhenAll(orderIds.Select(id => db.HashGetAsync($"pay:order:{id}", fields)));
        return [.. orderIds.Zip(orders)
            .Where(o => o.Second[0] != "Paid" || o.Second.Skip(1).Any(v => v != "1"))
            .Select(o => $"{o.First}: status {o.Second[0]}, {string.Join(", ", OrderStore.Effects.Zip(o.Second.Skip(1), (e, v) => $"{e}={v}"))}")];
    }
}
