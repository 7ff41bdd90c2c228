using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Redis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// Adds a step to the Redis warm-up (<see cref="RedisWarmupOptions.WarmupCallbacks"/>) that creates every durable
/// queue's consumer group, so the group exists once the host has started, before anything is enqueued: an autoscaler
/// reading it (KEDA's <c>redis-streams</c> scaler, see docs/keda.md) never meets a missing one. Each store's own thread
/// also makes sure of it (it started before the warm-up ran, and it is the one that makes the group again after Redis
/// lost its data), and doing it twice is harmless: the script leaves an existing group and epoch as they are.
/// </summary>
/// <remarks>
/// Without it the group was made by the store's first pass, on its own thread, which the host's start did not wait
/// for: a scaler, or a test, reading Redis just after the start could find no stream at all. As a warm-up step, a
/// failure follows <see cref="RedisWarmupOptions.FailureMode"/> (the app does not start, or starts not ready and
/// retries). A connection registered without <c>AddRedisWarmup</c> has no warm-up: the store's first pass makes the group.
/// </remarks>
internal sealed class DurableGroupsWarmup(IServiceProvider services) : IConfigureOptions<RedisWarmupOptions>
{
    public void Configure(RedisWarmupOptions options) => options.WarmupCallbacks.Add(CreateGroupsAsync);

    private async Task CreateGroupsAsync(IConnectionMultiplexer multiplexer, CancellationToken cancellationToken)
    {
        // The provider creates every queue, and so every store, the first time it is resolved: the host has by now.
        _ = services.GetRequiredService<IWorkQueueProvider>();
        var db = multiplexer.GetDatabase();
        foreach (var queue in services.GetRequiredService<DurableQueueRegistry>().Queues)
        {
            try
            {
                await queue.Store.CreateGroupAsync(db).WaitAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (RedisException ex)
            {
                string why = DurableAccess.IsRefusal(ex.Message)
                    ? await ExplainRefusalAsync(multiplexer, db, queue.Store, ex.Message).WaitAsync(cancellationToken).ConfigureAwait(false)
                    : ex.Message;
                throw new InvalidOperationException($"Durable queue '{queue.Store.QueueName}': its consumer group could not be created in {queue.Store.Keys.Stream}: {why}", ex);
            }
        }
    }

    /// <summary>
    /// Says which commands the user may not run and the ACL to add (<see cref="DurableAccess"/>), as a store does for a
    /// refusal at first use: the startup checks ran before this step (<see cref="RedisWarmupService"/>), but under
    /// <see cref="RedisServerCheckMode.Warn"/> or <see cref="RedisServerCheckMode.Off"/> they do not fail the start, and
    /// this step's failure would otherwise carry Redis's bare refusal (inside a script Redis 7.0 does not name the command).
    /// </summary>
    private static async Task<string> ExplainRefusalAsync(IConnectionMultiplexer multiplexer, IDatabase db, RedisStreamStore store, string error)
    {
        AccessReport report;
        try
        {
            report = await DurableAccess.CheckAsync(db, store.Keys, store.KeyPrefix, store.Consumes).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is RedisException or TimeoutException)
        {
            report = AccessReport.Unchecked;
        }

        return $"{report.Explain(DurableAccess.UserOf(multiplexer), store.KeyPrefix)} (Redis: {error})";
    }
}
