using System.Globalization;
using StackExchange.Redis;
using WorkQueue.Internal;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// Fetching (due retries promoted and new entries read, at the end of the round script that also carries enqueues and
/// acknowledgements), heartbeats that keep this process's claims alive, reclaiming the entries of consumers that died,
/// removing consumers that are gone, and cluster-wide statistics.
/// </summary>
internal sealed partial class RedisStreamStore
{
    private const int PromoteLimit = 256;

    private volatile bool _nudged = true;
    private volatile bool _wantRoom;
    private bool _moreWaiting;
    private long _nextPoll;
    private long _nextHeartbeat;
    private long _nextCleanup;
    private string _reclaimCursor = "0-0";
    private volatile DurableQueueStats? _stats;
    private long _statsWantedUntil;

    /// <summary>Gets the cluster-wide figures last read from Redis, and asks for fresh ones (read about once a second while someone asks).</summary>
    public DurableQueueStats? GetStats()
    {
        Volatile.Write(ref _statsWantedUntil, _time.GetTimestamp() + (long)(StatsInterest.TotalSeconds * _time.TimestampFrequency));
        var stats = _stats;
        if (stats is null || _time.GetUtcNow() - stats.ReadAt > StatsMaxAge)
        {
            Signal();
        }

        return stats;
    }

    public bool TryStart(in WorkItem item)
    {
        var entry = (DurableEntry)item.Target!;
        if (_wantRoom)
        {
            // The fetcher found the prefetch full: a job leaving it makes room.
            _wantRoom = false;
            Signal();
        }

        if (_lost.TryRemove(entry.StreamId, out _))
        {
            _held.TryRemove(entry.StreamId, out _);
            return false;
        }

        return true;
    }

    private void OnNudged()
    {
        _nudged = true;
        Signal();
    }

    /// <summary>Runs what is due and returns how long the thread may sleep.</summary>
    private TimeSpan Housekeep(IDatabase db)
    {
        long now = _time.GetTimestamp();
        if (now >= _nextHeartbeat)
        {
            _nextHeartbeat = now + Ticks(_durable.HeartbeatInterval);
            KeepAlive(db);
            if (!_fetchStopped)
            {
                Reclaim(db);
            }
        }

        if (now >= _nextCleanup)
        {
            _nextCleanup = now + Ticks(TimeSpan.FromMinutes(1));
            RemoveIdleConsumers(db);
        }

        if (_stats is null || (Volatile.Read(ref _statsWantedUntil) > now && _time.GetUtcNow() - _stats.ReadAt >= StatsMaxAge))
        {
            ReadStats(db);
        }

        if (_moreWaiting && _intake!.FreeSlots > 0 && !_fetchStopped)
        {
            return TimeSpan.Zero;
        }

        long next = Math.Min(_nextHeartbeat, _nextCleanup);
        if (!_fetchStopped)
        {
            next = Math.Min(next, _nextPoll);
        }

        var wait = next <= now ? TimeSpan.Zero : _time.GetElapsedTime(now, next);
        if (Volatile.Read(ref _statsWantedUntil) > now)
        {
            wait = Min(wait, StatsMaxAge);
        }

        return RoomRetryIn() is { } room2 ? Min(wait, room2) : wait;
    }

    /// <summary>
    /// Decides whether this round fetches: when a notification came, the last fetch filled the room, the poll is due, or
    /// this round stores new jobs (read back in the same round trip). Returns the room to fetch into, or 0.
    /// </summary>
    private int FetchRoom(bool enqueuing)
    {
        if (_fetchStopped || !(_nudged || _moreWaiting || enqueuing || _time.GetTimestamp() >= _nextPoll))
        {
            return 0;
        }

        int room = _intake!.FreeSlots;
        if (room <= 0)
        {
            // The prefetch is full: a job leaving it signals the thread (TryStart).
            _wantRoom = true;
            return 0;
        }

        _nudged = false;
        return room;
    }

    /// <summary>
    /// Takes in what a round fetched: the entries into the prefetch, and when to poll next. A read that failed (the
    /// group is gone) is thrown as the server's error once the rest of the round is settled.
    /// </summary>
    private void FinishFetch(IDatabase db, int room, long sentAt, RedisResult nextDue, RedisResult fetched, RedisResult error)
    {
        if (!error.IsNull)
        {
            throw new RedisServerException(RedisErrorKind.Unknown, CommandFlags.None, (string)error!);
        }

        long nextDueMs = (long)nextDue;
        var entries = (RedisResult[])fetched!;
        _moreWaiting = entries.Length == room;
        _nextPoll = sentAt + Ticks(_durable.PollInterval);
        if (nextDueMs >= 0)
        {
            _nextPoll = Math.Min(_nextPoll, sentAt + Ticks(TimeSpan.FromMilliseconds(nextDueMs)));
        }

        foreach (var raw in entries)
        {
            var pair = (RedisResult[])raw!;
            Accept(db, DurableEntry.Parse((string)pair[0]!, pair[1], deliveries: 1));
        }
    }

    /// <summary>Reads one fetched entry into the prefetch; one that cannot be read is dead-lettered at once and never runs.</summary>
    private void Accept(IDatabase db, DurableEntry entry)
    {
        if (!_jobType.TryRead(entry.Payload, out var payload, out var error))
        {
            TryLog(static (l, s) => Log.Unreadable(l, s._queue, s.StreamId, s.error!), (_queue, entry.StreamId, error));
            db.ScriptEvaluate(
                DurableScripts.DeadLetter,
                [Keys.Stream, Keys.Dead],
                [RedisStreamKeys.Group, ConsumerName, entry.StreamId, entry.JobId, entry.Payload, entry.Attempt, entry.EnqueuedAtMs, error, "unreadable"]);
            return;
        }

        _held[entry.StreamId] = entry;
        if (!_intake!.TryAccept(_jobType.Invoker, entry, payload, entry.Attempt))
        {
            // The queue stopped taking jobs between the fetch and now: hand it straight back.
            _outcomes.Enqueue(new Outcome(OutcomeKind.Release, entry, 0, null));
        }
    }

    private void KeepAlive(IDatabase db)
    {
        if (_held.IsEmpty)
        {
            return;
        }

        int lostCount = 0;
        foreach (var chunk in _held.Keys.Chunk(BatchSize))
        {
            var args = new RedisValue[chunk.Length + 2];
            args[0] = RedisStreamKeys.Group;
            args[1] = ConsumerName;
            for (int i = 0; i < chunk.Length; i++)
            {
                args[i + 2] = chunk[i];
            }

            var lost = (RedisResult[])db.ScriptEvaluate(DurableScripts.KeepAlive, [Keys.Stream], args)!;
            foreach (var id in lost)
            {
                string streamId = (string)id!;

                // Settled meanwhile (its outcome is on its way) or taken over by another consumer.
                if (_held.ContainsKey(streamId))
                {
                    _lost[streamId] = 0;
                    lostCount++;
                }
            }
        }

        if (lostCount > 0)
        {
            TryLog(static (l, s) => Log.ClaimsLost(l, s._queue, s.lostCount), (_queue, lostCount));
        }
    }

    private void Reclaim(IDatabase db)
    {
        int room = _intake!.FreeSlots;
        if (room <= 0)
        {
            return;
        }

        var result = (RedisResult[])db.ScriptEvaluate(
            DurableScripts.Reclaim,
            [Keys.Stream, Keys.Dead],
            [RedisStreamKeys.Group, ConsumerName, (long)_durable.ClaimTimeout.TotalMilliseconds, _reclaimCursor, room, _durable.MaxDeliveries])!;
        _reclaimCursor = (string)result[0]!;
        var claimed = (RedisResult[])result[1]!;
        foreach (var raw in claimed)
        {
            var triple = (RedisResult[])raw!;
            Accept(db, DurableEntry.Parse((string)triple[0]!, triple[1], (long)triple[2]));
        }

        if (claimed.Length > 0)
        {
            TryLog(static (l, s) => Log.Reclaimed(l, s._queue, s.Length), (_queue, claimed.Length));
        }
    }

    private void RemoveIdleConsumers(IDatabase db)
    {
        // Idle for two claim timeouts with nothing pending: that consumer's process is gone (a live one fetches at
        // least every PollInterval, which resets its idle time).
        long minIdle = (long)Math.Max(_durable.ClaimTimeout.TotalMilliseconds * 2, 60_000);
        var removed = (RedisResult[])db.ScriptEvaluate(DurableScripts.RemoveIdleConsumers, [Keys.Stream], [RedisStreamKeys.Group, ConsumerName, minIdle])!;
        if (removed.Length > 0)
        {
            TryLog(static (l, s) => Log.ConsumersRemoved(l, s._queue, s.Item2), (_queue, string.Join(", ", removed.Select(r => (string?)r))));
        }
    }

    private void ReadStats(IDatabase db)
    {
        var r = (RedisResult[])db.ScriptEvaluate(DurableScripts.Stats, [Keys.Stream, Keys.Delayed, Keys.Dead], [RedisStreamKeys.Group])!;
        var consumers = ((RedisResult[])r[5]!)
            .Select(c => (RedisResult[])c!)
            .Select(c => new DurableConsumerStats((string)c[0]!, (long)c[1], TimeSpan.FromMilliseconds((long)c[2]), (string)c[0]! == ConsumerName))
            .ToArray();
        long lag = (long)r[4];
        _stats = new DurableQueueStats(
            ConsumerName,
            StreamLength: (long)r[0],
            Pending: (long)r[3],
            Lag: lag < 0 ? null : lag,
            DelayedRetries: (long)r[1],
            DeadLetters: (long)r[2],
            Consumers: consumers,
            ReadAt: _time.GetUtcNow());
    }

    private long Ticks(TimeSpan span) => (long)(span.TotalSeconds * _time.TimestampFrequency);

    private static TimeSpan Min(TimeSpan a, TimeSpan b) => a < b ? a : b;
}
