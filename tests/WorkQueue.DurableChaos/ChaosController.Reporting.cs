using System.Globalization;
using StackExchange.Redis;

namespace WorkQueue.DurableChaos;

/// <summary>
/// The final count, read from Redis once every worker has stopped: per job number, how many times a handler completed it.
/// Lost = acknowledged and never completed; duplicates = completions beyond one per job.
/// </summary>
internal sealed partial class ChaosController
{
    private bool _keepDirectory;

    private async Task<int> ReportAsync(bool timedOut, int workersNotStopped, int workerBadExits)
    {
        var db = Monitor;
        var runs = new int[_settings.Jobs + 1];
        foreach (var entry in await db.HashGetAllAsync(_keys.Runs))
        {
            int n = (int)entry.Name;
            if (n >= 1 && n <= _settings.Jobs)
            {
                runs[n] = (int)entry.Value;
            }
        }

        int acknowledged = 0;
        int lost = 0;
        long duplicates = 0;
        var lostSample = new List<int>();
        for (int n = 1; n <= _settings.Jobs; n++)
        {
            duplicates += Math.Max(0, runs[n] - 1);
            if (!Volatile.Read(ref _acknowledged[n]))
            {
                continue;
            }

            acknowledged++;
            if (runs[n] == 0)
            {
                lost++;
                if (lostSample.Count < 20)
                {
                    lostSample.Add(n);
                }
            }
        }

        long dead = await db.StreamLengthAsync(_keys.Dead);
        long leftInStream = await db.StreamLengthAsync(_keys.Stream);
        long leftDelayed = await db.SortedSetLengthAsync(_keys.Delayed);
        long leftPending = await PendingTotalAsync(db);
        var sorted = _reclaimMs.Order().ToArray();
        double? p50 = sorted.Length == 0 ? null : sorted[(sorted.Length - 1) / 2];
        double? max = sorted.Length == 0 ? null : sorted[^1];
        long elapsedMs = (long)Elapsed.TotalMilliseconds;

        ChaosReport.Write("jobs", _settings.Jobs);
        ChaosReport.Write("acknowledged", acknowledged);
        ChaosReport.Write("enqueue_retries", _enqueueRetries);
        ChaosReport.Write("kills", _kills);
        ChaosReport.Write("kills_with_pending", _killsWithPending);
        ChaosReport.Write("entries_left_by_kills", _entriesLeftByKills);
        ChaosReport.Write("redis_restarts", _redisRestarts);
        ChaosReport.Write("redis_down_ms", _redisDownFor.TotalMilliseconds);
        ChaosReport.Write("failovers", _failovers);
        ChaosReport.Write("failover_ms", _failoverTook.TotalMilliseconds.ToString("F0", CultureInfo.InvariantCulture));
        ChaosReport.Write("replica_acks", _settings.ReplicaAcks);
        ChaosReport.Write("not_replicated", _notReplicated);
        ChaosReport.Write("slot_moves", _slotMove is null ? 0 : 1);
        ChaosReport.Write("slot_keys", _slotMove?.Keys ?? 0);
        ChaosReport.Write("slot_move_ms", (_slotMove?.Migrated.TotalMilliseconds ?? 0).ToString("F0", CultureInfo.InvariantCulture));
        ChaosReport.Write("enqueue_pause_ms", _slotMove is null ? "none" : EnqueuePauseMs().ToString("F0", CultureInfo.InvariantCulture));

        // From Redis answering PING again to the first enqueue acknowledged after it: the client's reconnection.
        ChaosReport.Write("enqueue_resumed_ms", _enqueueResumedAfter?.TotalMilliseconds.ToString("F0", CultureInfo.InvariantCulture) ?? "none");
        ChaosReport.Write("lost", lost);
        ChaosReport.Write("duplicates", duplicates);
        ChaosReport.Write("dead", dead);
        ChaosReport.Write("reclaim_ms_p50", p50?.ToString("F0", CultureInfo.InvariantCulture) ?? "none");
        ChaosReport.Write("reclaim_ms_max", max?.ToString("F0", CultureInfo.InvariantCulture) ?? "none");
        ChaosReport.Write("reclaims_unfinished", _reclaims.Count);
        ChaosReport.Write("left_in_stream", leftInStream);
        ChaosReport.Write("left_pending", leftPending);
        ChaosReport.Write("left_delayed", leftDelayed);
        ChaosReport.Write("workers_started", _nextWorkerNumber);
        ChaosReport.Write("worker_crashes", _workerCrashes);
        ChaosReport.Write("worker_bad_exits", workerBadExits + workersNotStopped);
        ChaosReport.Write("worker_errors", _workerLog.Errors);
        ChaosReport.Write("timed_out", timedOut ? "true" : "false");
        ChaosReport.Write("elapsed_ms", elapsedMs);

        if (lost > 0)
        {
            Say($"LOST {lost} acknowledged jobs, e.g. {string.Join(", ", lostSample)}");
        }

        foreach (string line in _workerLog.FirstErrors)
        {
            Say($"worker error: {line}");
        }

        bool fellShort = timedOut || acknowledged < _settings.Jobs || _kills < _settings.MinKills
            || (_settings.RestartRedis && _redisRestarts == 0) || (_settings.Sentinel && _failovers == 0) || (_settings.Cluster && _slotMove is null) || _workerCrashes > 0 || workerBadExits + workersNotStopped > 0;
        // Kept for a look when anything went wrong (worker logs, redis.log, the append-only file).
        _keepDirectory = _settings.KeepDirectory || lost > 0 || fellShort || dead > 0 || _workerLog.Errors > 0;
        if (_keepDirectory)
        {
            ChaosReport.Write("dir", _directory.FullName);
        }

        Say(string.Create(
            CultureInfo.InvariantCulture,
            $"{_settings.Jobs} jobs, {acknowledged} acknowledged, {_kills} workers SIGKILLed ({_killsWithPending} holding {_entriesLeftByKills} entries), " +
            $"{_redisRestarts} Redis restarts, {_failovers} failovers, {(_slotMove is null ? 0 : 1)} slot moves: {lost} lost, {duplicates} duplicates ({100.0 * duplicates / Math.Max(1, acknowledged):F2} %), {dead} dead-lettered; " +
            $"reclaim p50 {p50?.ToString("F0", CultureInfo.InvariantCulture) ?? "-"} ms, max {max?.ToString("F0", CultureInfo.InvariantCulture) ?? "-"} ms; " +
            $"{elapsedMs / 1000.0:F1} s. {(lost > 0 ? "FAILED: jobs lost." : fellShort ? "INCOMPLETE: the run fell short of what was asked." : "OK")}"));

        return lost > 0 ? 1 : fellShort ? 2 : 0;
    }

    private async Task<long> PendingTotalAsync(IDatabase db)
    {
        try
        {
            return (await db.StreamPendingAsync(_keys.Stream, ChaosKeys.Group)).PendingMessageCount;
        }
        catch (RedisServerException ex) when (ex.Message.Contains("NOGROUP", StringComparison.Ordinal))
        {
            return 0;
        }
    }
}
