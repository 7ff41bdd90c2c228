using StackExchange.Redis;

namespace WorkQueue.DurableChaos;

/// <summary>
/// The kills: SIGKILL a random worker and start its replacement at once. While the producers run, the victim is drawn
/// from the workers that hold jobs at that moment (XPENDING per consumer), so that every kill interrupts work; when none
/// does, the kill waits for one, at most half an interval, then takes any ready worker. Each kill that left entries
/// pending on the dead consumer is tracked until a survivor has reclaimed them all (XPENDING shows nothing for that
/// consumer): the reclaim delay, measured from the kill.
/// </summary>
internal sealed partial class ChaosController
{
    private readonly List<Reclaim> _reclaims = [];
    private readonly List<double> _reclaimMs = [];
    private int _kills;
    private int _killsWithPending;
    private long _entriesLeftByKills;

    /// <summary>Kills a worker; returns <see langword="false"/> when none could be killed now (try again at the next tick).</summary>
    private async Task<bool> TryKillRandomWorkerAsync(bool onlyBusy)
    {
        var candidates = _workers.Where(w => w.Ready.IsCompletedSuccessfully && !w.HasExited).ToArray();
        if (onlyBusy)
        {
            var byConsumer = await PendingByConsumerAsync() ?? [];
            candidates = [.. candidates.Where(w => byConsumer.Any(c => c.Name.StartsWith(w.ConsumerPrefix, StringComparison.Ordinal) && c.Pending > 0))];
        }

        if (candidates.Length == 0)
        {
            return false;
        }

        var victim = candidates[Random.Shared.Next(candidates.Length)];
        var killedAt = Elapsed;
        await victim.KillAsync();
        _kills++;
        _workers.Remove(victim);
        _retired.Add(victim);
        var replacement = StartWorker();

        // Dead now: its pending entries can only go down from here, as survivors reclaim them.
        long pending = await PendingOfAsync(victim.ConsumerPrefix) ?? -1;
        Say($"kill {_kills}: SIGKILL worker {victim.Number} (pid {victim.Pid}), {(pending < 0 ? "pending unknown" : $"{pending} entries pending")}; started worker {replacement.Number} (pid {replacement.Pid})");
        if (pending != 0)
        {
            _killsWithPending++;
            _entriesLeftByKills += Math.Max(0, pending);
            _reclaims.Add(new Reclaim(_kills, victim.ConsumerPrefix, killedAt));
        }

        return true;
    }

    /// <summary>Records the delay of every tracked kill whose consumer has nothing pending any more.</summary>
    private async Task TrackReclaimsAsync()
    {
        if (_reclaims.Count == 0)
        {
            return;
        }

        var byConsumer = await PendingByConsumerAsync();
        if (byConsumer is null)
        {
            return;
        }

        foreach (var reclaim in _reclaims.ToArray())
        {
            if (!byConsumer.Any(c => c.Name.StartsWith(reclaim.ConsumerPrefix, StringComparison.Ordinal) && c.Pending > 0))
            {
                var delay = Elapsed - reclaim.KilledAt;
                _reclaimMs.Add(delay.TotalMilliseconds);
                _reclaims.Remove(reclaim);
                Say($"kill {reclaim.Kill}: reclaimed {delay.TotalMilliseconds:F0} ms after the kill");
            }
        }
    }

    /// <summary>After the load: the last kills' reclaims are waited for (bounded), so every kill gets its figure.</summary>
    private async Task WaitForReclaimsAsync()
    {
        var deadline = Elapsed + ReclaimWaitAfterLoad;
        while (_reclaims.Count > 0 && Elapsed < deadline)
        {
            await TrackReclaimsAsync();
            await Task.Delay(Tick);
        }
    }

    private async Task<long?> PendingOfAsync(string consumerPrefix)
    {
        var byConsumer = await PendingByConsumerAsync();
        return byConsumer?.Where(c => c.Name.StartsWith(consumerPrefix, StringComparison.Ordinal)).Sum(c => c.Pending);
    }

    /// <summary>Gets each consumer's pending count (XPENDING's summary form), or <see langword="null"/> while Redis cannot say.</summary>
    private async Task<(string Name, long Pending)[]?> PendingByConsumerAsync()
    {
        try
        {
            var info = await Monitor.StreamPendingAsync(_keys.Stream, ChaosKeys.Group);
            return [.. info.Consumers.Select(c => ((string)c.Name!, (long)c.PendingMessageCount))];
        }
        catch (RedisServerException ex) when (ex.Message.Contains("NOGROUP", StringComparison.Ordinal))
        {
            return [];
        }
        catch (Exception ex) when (ex is RedisException or TimeoutException)
        {
            return null;
        }
    }

    private sealed record Reclaim(int Kill, string ConsumerPrefix, TimeSpan KilledAt);
}
