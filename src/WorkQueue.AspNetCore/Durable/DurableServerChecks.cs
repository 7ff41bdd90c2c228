using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Redis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The durable queues' startup checks of the Redis server each uses (<see cref="DurableQueueOptions.ServerChecks"/>), run
/// by the warm-up once Redis answers, two script calls per queue on the node that holds it: whether the connection's
/// user may run every command the queue sends (<see cref="DurableAccess"/>; a refusal is logged as an error naming the
/// commands and the ACL to add, event 522), then the settings that can cost a queue its jobs and the version its scripts
/// need (<c>serverInfo.lua</c>; each risk logged, event 520, a warning, or an error when the queue's checks are
/// <see cref="RedisServerCheckMode.Fail"/>). A queue whose checks are Fail and find anything fails the warm-up with a
/// message naming all of it. A server that will not tell (INFO refused by an ACL, say) gets one warning per queue saying
/// so and why (event 521), and the queue goes on.
/// </summary>
internal sealed partial class DurableServerChecks : IRedisWarmupCheck
{
    private readonly IServiceProvider _services;
    private readonly ILogger _logger;

    public DurableServerChecks(IServiceProvider services)
    {
        _services = services;

        // The category the queues log under, so one filter shows a queue's whole story.
        _logger = services.GetService<ILoggerFactory>()?.CreateLogger("WorkQueue") ?? NullLogger.Instance;
    }

    public async Task RunAsync(IConnectionMultiplexer multiplexer, CancellationToken cancellationToken)
    {
        // Resolving the provider creates the queues, and so their stores, if nothing has yet.
        _ = _services.GetRequiredService<IWorkQueueProvider>().Queues;
        var failures = new List<string>();
        foreach (var queue in _services.GetRequiredService<DurableQueueRegistry>().Queues)
        {
            var store = queue.Store;
            if (store.ServerChecks == RedisServerCheckMode.Off)
            {
                continue;
            }

            string endpoint = Describe(multiplexer, store.Keys.Stream);
            var access = await CheckAccessAsync(multiplexer.GetDatabase(), store, endpoint, cancellationToken).ConfigureAwait(false);
            if (!access.Allowed)
            {
                // A refused command is no risk but a certain failure: an error in either mode.
                string refusal = access.Explain(DurableAccess.UserOf(multiplexer), store.KeyPrefix);
                Log.AccessDenied(_logger, store.QueueName, endpoint, refusal, store.ServerChecks);
                if (store.ServerChecks == RedisServerCheckMode.Fail)
                {
                    failures.Add($"Durable queue '{store.QueueName}' on Redis {endpoint}: {refusal}");
                }
            }

            var risks = await ReadRisksAsync(multiplexer.GetDatabase(), store, endpoint, cancellationToken).ConfigureAwait(false);
            var level = store.ServerChecks == RedisServerCheckMode.Fail ? LogLevel.Error : LogLevel.Warning;
            foreach (var risk in risks)
            {
                Log.ServerRisk(_logger, level, store.QueueName, endpoint, risk.Setting, risk.Value, risk.Consequence, risk.Remedy, store.ServerChecks);
                if (store.ServerChecks == RedisServerCheckMode.Fail)
                {
                    failures.Add($"Durable queue '{store.QueueName}': Redis {endpoint} has {risk.Setting} {risk.Value}: {risk.Consequence}; {risk.Remedy}.");
                }
            }
        }

        if (failures.Count > 0)
        {
            throw new InvalidOperationException(
                string.Join(" ", failures) + " (DurableQueueOptions.ServerChecks is Fail: fix the server or the user's ACL, or set it to Warn to run anyway.)");
        }
    }

    /// <summary>Asks Redis what the user may not run; nothing known when the check fails for another reason than an ACL (logged once, with why).</summary>
    private async Task<AccessReport> CheckAccessAsync(IDatabase db, RedisStreamStore store, string endpoint, CancellationToken cancellationToken)
    {
        try
        {
            return await DurableAccess.CheckAsync(db, store.Keys, store.KeyPrefix, store.Consumes).WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (RedisServerException ex)
        {
            Log.ChecksSkipped(_logger, store.QueueName, endpoint, $"the access check failed ({ex.Message})");
            return AccessReport.Unchecked;
        }
    }

    /// <summary>Reads the settings and returns their risks; none when Redis would not tell (logged once, with why).</summary>
    private async Task<IReadOnlyList<ServerRisk>> ReadRisksAsync(IDatabase db, RedisStreamStore store, string endpoint, CancellationToken cancellationToken)
    {
        Calls.ServerInfoReply reply;
        try
        {
            reply = await Calls.ServerInfoCall.RunAsync(db, store.Keys).WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (RedisServerException ex)
        {
            // Redis refused the script itself (an ACL without EVAL, a key pattern that leaves the queue out; the access
            // check has named it) or cannot run it.
            Log.ChecksSkipped(_logger, store.QueueName, endpoint, $"the settings could not be read ({ex.Message})");
            return [];
        }

        if (reply.Info is null)
        {
            // INFO refused (an ACL without +info): the version the script engine knows is still checked.
            Log.ChecksSkipped(_logger, store.QueueName, endpoint, $"Redis refused INFO to the connection's user ({reply.InfoRefusal}); grant it +info to have maxmemory-policy and appendonly checked");
            return new RedisServerSettings(reply.Version, null, null, null).Risks();
        }

        return RedisServerSettings.Parse(reply.Version, reply.Info).Risks();
    }

    private static string Describe(IConnectionMultiplexer multiplexer, RedisKey key)
    {
        try
        {
            return RedisConnection.Format(multiplexer.GetServer(key).EndPoint);
        }
        catch (Exception ex) when (ex is RedisException or InvalidOperationException or NotSupportedException)
        {
            return string.Join(", ", multiplexer.GetEndPoints().Select(RedisConnection.Format));
        }
    }

    private static partial class Log
    {
        [LoggerMessage(EventId = 520, EventName = "DurableServerRisk", Message = "Durable queue '{Queue}': Redis {Endpoint} has {Setting} {Value}: {Consequence}. To keep the queue's jobs, {Remedy} (DurableQueueOptions.ServerChecks is {Mode}).")]
        public static partial void ServerRisk(ILogger logger, LogLevel level, string queue, string endpoint, string setting, string value, string consequence, string remedy, RedisServerCheckMode mode);

        [LoggerMessage(522, LogLevel.Error, "Durable queue '{Queue}' on Redis {Endpoint}: {Refusal} The queue fails when it sends what is refused (DurableQueueOptions.ServerChecks is {Mode}).", EventName = "DurableAccessDenied")]
        public static partial void AccessDenied(ILogger logger, string queue, string endpoint, string refusal, RedisServerCheckMode mode);

        [LoggerMessage(521, LogLevel.Warning, "Durable queue '{Queue}': a startup check of Redis {Endpoint} could not run: {Reason}. The queue goes on without it.", EventName = "DurableServerChecksSkipped")]
        public static partial void ChecksSkipped(ILogger logger, string queue, string endpoint, string reason);
    }
}
