using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using WorkQueue.AspNetCore;

namespace WorkQueue.DurableChaos;

/// <summary>
/// The producers: several concurrent loops in this process, each enqueueing the next job number through the library's
/// <see cref="IWorkQueue"/>. A job counts as accepted only once <c>EnqueueAsync</c> completed (Redis has it); one
/// refused because Redis is unreachable is tried again after a short delay. With <c>--restart-redis</c>, Redis is
/// SIGKILLed and restarted once half the jobs are in.
/// </summary>
internal sealed partial class ChaosController
{
    private static readonly TimeSpan EnqueueRetryDelay = TimeSpan.FromMilliseconds(100);

    private readonly bool[] _acknowledged;
    private TimeSpan? _loadStartedAt;
    private readonly TaskCompletionSource _halfAcknowledged = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private IHost? _producerHost;
    private int _nextJob;
    private int _acknowledgedCount;
    private int _enqueueRetries;
    private int _notReplicated;
    private int _failovers;
    private TimeSpan _failoverTook;
    private int _redisRestarts;
    private TimeSpan _redisDownFor;
    private TimeSpan? _redisBackAt;
    private TimeSpan? _enqueueResumedAfter;
    private readonly System.Collections.Concurrent.ConcurrentQueue<long> _acknowledgedAt = new();
    private ChaosCluster.SlotMove? _slotMove;
    private TimeSpan _slotMoveStartedAt;

    private async Task ProduceAsync(CancellationToken timeout)
    {
        _producerHost = BuildProducerHost();
        await _producerHost.StartAsync(timeout);

        // Declaring a durable queue also makes this process one of its consumers: the library has no producer-only
        // registration. Paused, with a prefetch of one, it holds at most one job, which its stop below hands back.
        _producerHost.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single(q => q.Name == ChaosKeys.Queue).Pause();
        var queue = _producerHost.Services.GetRequiredKeyedService<IWorkQueue>(ChaosKeys.Queue);
        var started = Elapsed;
        _loadStartedAt = started;
        Say($"{_settings.Producers} producers enqueue {_settings.Jobs} jobs{(_settings.Rate > 0 ? $" at {_settings.Rate}/s" : string.Empty)}{(_settings.Bursts ? $", in bursts of {BurstSize} every {_settings.KillInterval.TotalMilliseconds:F0} ms" : string.Empty)}");
        try
        {
            await Task.WhenAll(Enumerable.Range(0, _settings.Producers).Select(_ => Task.Run(() => ProducerAsync(queue, started, timeout), CancellationToken.None)));
            Say($"all {_acknowledgedCount} jobs acknowledged ({_enqueueRetries} enqueue attempts refused and retried)");
        }
        finally
        {
            // Hands the paused consumer's one prefetched job back to the stream, for the workers.
            await _producerHost.StopAsync(CancellationToken.None);
        }
    }

    /// <summary>Gets how many jobs one burst releases at once: the rate times the kill interval.</summary>
    private int BurstSize => Math.Max(1, (int)(_settings.Rate * _settings.KillInterval.TotalSeconds));

    private async Task ProducerAsync(IWorkQueue queue, TimeSpan started, CancellationToken timeout)
    {
        int n;
        while ((n = Interlocked.Increment(ref _nextJob)) <= _settings.Jobs)
        {
            if (_settings.Rate > 0)
            {
                var due = _settings.Bursts
                    ? started + ((n - 1) / BurstSize * _settings.KillInterval)
                    : started + TimeSpan.FromSeconds((n - 1) / (double)_settings.Rate);
                if (due > Elapsed)
                {
                    await Task.Delay(due - Elapsed, timeout);
                }
            }

            while (true)
            {
                timeout.ThrowIfCancellationRequested();
                try
                {
                    await queue.EnqueueAsync<ChaosJobHandler, ChaosJob>(new ChaosJob(n), timeout);
                    break;
                }
                catch (EnqueueNotReplicatedException)
                {
                    // Stored on the primary, not confirmed on a replica: not acknowledged, so sent again (a second
                    // copy can only make a duplicate run).
                    Interlocked.Increment(ref _notReplicated);
                    Interlocked.Increment(ref _enqueueRetries);
                    await Task.Delay(EnqueueRetryDelay, timeout);
                }
                catch (Exception ex) when (ex is JobRejectedException { Reason: RejectionReason.StoreUnavailable } or EnqueueOutcomeUnknownException)
                {
                    // Not acknowledged: it may or may not be in Redis (a reply lost with the connection), so it is sent
                    // again. A second copy can only make a duplicate run.
                    Interlocked.Increment(ref _enqueueRetries);
                    await Task.Delay(EnqueueRetryDelay, timeout);
                }
            }

            if (_settings.Cluster)
            {
                _acknowledgedAt.Enqueue(Elapsed.Ticks);
            }

            if (_redisBackAt is { } back && _enqueueResumedAfter is null)
            {
                _enqueueResumedAfter = Elapsed - back;
            }

            Volatile.Write(ref _acknowledged[n], true);
            if (Interlocked.Increment(ref _acknowledgedCount) == Math.Max(1, _settings.Jobs / 2))
            {
                _halfAcknowledged.TrySetResult();
            }
        }
    }

    private IHost BuildProducerHost()
    {
        var builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Logging.AddSimpleConsole(o =>
        {
            o.SingleLine = true;
            o.TimestampFormat = "HH:mm:ss.fff ";
        }).SetMinimumLevel(LogLevel.Warning);
        builder.Services.AddSingleton(_keys);
        builder.Services.AddRedisWarmup(o =>
        {
            o.Configuration = RedisConfiguration;
            o.SyncTimeout = RedisTimeout;
        });
        builder.Services.AddWorkQueue().AddDurableQueue<ChaosJobHandler, ChaosJob>(
            ChaosKeys.Queue,
            WorkerCommand.ConfigureEngine,
            d =>
            {
                d.Prefetch = 1;
                d.ClaimTimeout = TimeSpan.FromMilliseconds(_settings.ClaimTimeoutMs);
                d.HeartbeatInterval = TimeSpan.FromMilliseconds(_settings.HeartbeatMs);
                d.KeyPrefix = _keys.Prefix;
                d.ReplicaAcknowledgements = _settings.ReplicaAcks;

                // At most half the connection's timeout, as the queue validates at startup.
                d.ReplicaAcknowledgementTimeout = RedisTimeout / 2 < TimeSpan.FromSeconds(1) ? RedisTimeout / 2 : TimeSpan.FromSeconds(1);
            });
        return builder.Build();
    }

    private TimeSpan RedisTimeout => WorkerCommand.RedisTimeout(TimeSpan.FromMilliseconds(_settings.ClaimTimeoutMs), TimeSpan.FromMilliseconds(_settings.HeartbeatMs));

    /// <summary>
    /// With <c>--sentinel</c>, once half the jobs are acknowledged: SIGKILL the primary (for good) and wait until the
    /// Sentinels have promoted the replica. What the replica had not received when the primary died is gone: with
    /// replica acknowledgements, no acknowledged enqueue is among it.
    /// </summary>
    private async Task FailOverMidLoadAsync(CancellationToken timeout)
    {
        await _halfAcknowledged.Task.WaitAsync(timeout);
        Say($"SIGKILL the primary ({_acknowledgedCount} jobs acknowledged)");
        _failoverTook = await _sentinel!.KillPrimaryAndWaitForPromotionAsync();
        _redisBackAt = Elapsed;
        _failovers++;
        Say($"the Sentinels promoted the replica {_failoverTook.TotalMilliseconds:F0} ms after the kill");
    }

    /// <summary>
    /// With <c>--cluster</c>, once half the jobs are acknowledged: move the queue's slot (its hash tag <c>{chaos}</c>) to
    /// another master while producers and workers go on. Scripts that name several of its keys get <c>TRYAGAIN</c> while
    /// the keys are split between the two masters; single-key commands get <c>ASK</c>, then <c>MOVED</c>.
    /// </summary>
    private async Task MoveSlotMidLoadAsync(CancellationToken timeout)
    {
        await _halfAcknowledged.Task.WaitAsync(timeout);
        Say($"moving the queue's slot to another master ({_acknowledgedCount} jobs acknowledged)");
        _slotMoveStartedAt = Elapsed;
        _slotMove = await _cluster!.MoveSlotAsync("{" + ChaosKeys.Queue + "}", _settings.MigrateBatch);
        _redisBackAt = Elapsed;
        Say($"slot {_slotMove.Slot} moved from 127.0.0.1:{_slotMove.SourcePort} to 127.0.0.1:{_slotMove.TargetPort}: {_slotMove.Keys} keys, migrated in {_slotMove.Migrated.TotalMilliseconds:F0} ms");
    }

    /// <summary>
    /// The longest gap between two acknowledged enqueues from the start of the slot move to 10 s after it: how long
    /// the producers were held up (at the rate asked, jobs are otherwise acknowledged every few ms).
    /// </summary>
    private double EnqueuePauseMs()
    {
        long from = _slotMoveStartedAt.Ticks;
        long to = (_redisBackAt ?? _slotMoveStartedAt).Ticks + TimeSpan.FromSeconds(10).Ticks;
        long[] window = [from, .. _acknowledgedAt.Where(t => t >= from && t <= to).Order()];
        double longest = 0;
        for (int i = 1; i < window.Length; i++)
        {
            longest = Math.Max(longest, TimeSpan.FromTicks(window[i] - window[i - 1]).TotalMilliseconds);
        }

        return longest;
    }

    /// <summary>Once half the jobs are acknowledged: SIGKILL redis-server, leave it down a moment, start it on the same port and directory.</summary>
    private async Task RestartRedisMidLoadAsync(CancellationToken timeout)
    {
        await _halfAcknowledged.Task.WaitAsync(timeout);
        var down = Elapsed;
        Say($"SIGKILL redis-server ({_acknowledgedCount} jobs acknowledged)");
        await _redis.KillAsync();
        await Task.Delay(_settings.RedisDownTime, timeout);
        await _redis.StartAsync();
        _redisBackAt = Elapsed;
        _redisDownFor = Elapsed - down;
        _redisRestarts++;
        Say($"redis-server restarted from its append-only file after {_redisDownFor.TotalMilliseconds:F0} ms down");
    }
}
