using System.Globalization;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.Internal;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// Fetching (due retries promoted and new entries read, the last part of each turn's round, see <c>.Round.cs</c>),
/// heartbeats that keep this process's claims alive, reclaiming the entries of consumers that died, removing consumers
/// that are gone, and cluster-wide statistics.
/// </summary>
internal sealed partial class RedisStreamStore
{
    private const int PromoteLimit = 256;

    private volatile bool _nudged = true;
    private readonly OwnNudgeFilter _ownNudges = new();
    private long _nudgesTaken;
    private volatile bool _wantRoom;
    private bool _reclaimWaiting;
    private bool _moreWaiting;
    private bool _prefetchFull;
    private bool _adoptOwn;
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

    public DurableQueueSnapshot GetSnapshot()
    {
        var stats = GetStats();
        return new DurableQueueSnapshot(
            ConsumerName,
            IsConnected,
            LastError,
            Held,
            stats?.StreamLength,
            stats?.Pending,
            stats?.Lag,
            stats?.DelayedRetries,
            stats?.DeadLetters,
            stats?.Consumers ?? [],
            stats?.ReadAt)
        {
            Scheduled = stats?.Scheduled,
        };
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

        if (!entry.TryMarkStarted(_time.GetUtcNow().ToUnixTimeMilliseconds()))
        {
            // Redis lost it and it was stored again, as a new entry any consumer runs; or a cancel by id came first
            // (settled by the store's thread).
            return false;
        }

        if (_held.TakeIfLost(entry.StreamId))
        {
            return false;
        }

        return true;
    }

    private void OnNudged()
    {
        _nudged = true;
        Signal();
    }

    /// <summary>
    /// Takes a message on the nudge channel: <c>{added}|{consumer}|{round}</c> from a round that enqueued (any other
    /// message, from a retry, a requeue or an older version, nudges). This consumer's own nudge is skipped when the round
    /// that published it already read everything (see <see cref="OwnNudgeFilter"/>); every other consumer's counts.
    /// </summary>
    private void OnNudgeMessage(RedisValue message)
    {
        if (!IsOwnNudge(message, ConsumerName, out long round) || _ownNudges.OnNudge(round))
        {
            OnNudged();
        }

        Interlocked.Increment(ref _nudgesTaken);
    }

    /// <summary>Gets how many messages on the nudge channel this consumer has taken (acted on or skipped); for tests.</summary>
    internal long NudgesTaken => Volatile.Read(ref _nudgesTaken);

    /// <summary>Gets the tag the round script appends to its nudge: this consumer and the round's number.</summary>
    private string NudgeTag(long round) => string.Create(CultureInfo.InvariantCulture, $"{ConsumerName}|{round}");

    /// <summary>Tells whether a nudge is <paramref name="consumer"/>'s own, and from which of its rounds.</summary>
    internal static bool IsOwnNudge(RedisValue message, string consumer, out long round)
    {
        round = 0;
        string? text = message;
        if (text is null)
        {
            return false;
        }

        int first = text.IndexOf('|');
        int last = text.LastIndexOf('|');
        return first >= 0 && last > first
            && text.AsSpan(first + 1, last - first - 1).SequenceEqual(consumer)
            && long.TryParse(text.AsSpan(last + 1), NumberStyles.None, CultureInfo.InvariantCulture, out round)
            && round > 0;
    }

    /// <summary>
    /// Refreshes the claims of every job held here and reclaims dead consumers' jobs, every heartbeat. The next one is
    /// scheduled only once this one succeeded: a failed heartbeat is tried again after the error backoff.
    /// </summary>
    private bool HeartbeatIfDue(IDatabase db)
    {
        long now = _time.GetTimestamp();
        if (now < _nextHeartbeat)
        {
            return false;
        }

        KeepAlive(db);
        if (Taking)
        {
            AdvertiseJobTypes(db);
            try
            {
                Reclaim(db);
            }
            catch (Exception ex) when (ex is RedisException or TimeoutException)
            {
                // Redis may have claimed entries for this consumer before the reply was lost.
                _adoptOwn = true;
                throw;
            }
        }

        _nextHeartbeat = now + Ticks(_durable.HeartbeatInterval);
        return false;
    }

    /// <summary>
    /// Says, for every job type this instance runs, that a consumer runs it now (see <see cref="RedisStreamKeys.JobTypes"/>):
    /// one HSET per heartbeat, whatever the number of types.
    /// </summary>
    private void AdvertiseJobTypes(IDatabase db)
    {
        var types = _types.All;
        if (types.Count == 0)
        {
            return;
        }

        // HSET with every field, sent as such: StackExchange.Redis's HashSet(key, fields) sends HMSET, which the
        // documented ACL (DurableAcl) does not allow. The key is a RedisKey, so a cluster routes by it.
        long now = RedisNowMs();
        var args = new object[1 + (2 * types.Count)];
        args[0] = Keys.JobTypes;
        int i = 1;
        foreach (var type in types)
        {
            args[i++] = type.Name;
            args[i++] = now;
        }

        db.Execute("HSET", args);
    }

    /// <summary>
    /// A retry the settler stored is due in <paramref name="delayMs"/>: the next poll comes no later, since this consumer
    /// learns due times from its fetches (the script nudges the others when this retry is the earliest due).
    /// </summary>
    private void RetryStored(long delayMs) =>
        _nextPoll = Math.Min(_nextPoll, _time.GetTimestamp() + Ticks(TimeSpan.FromMilliseconds(delayMs)));

    /// <summary>Gets Redis's time as this process measures it (its clock moved by the last measured offset), in Unix ms.</summary>
    private long RedisNowMs() => (_time.GetUtcNow() + _clock.Offset).ToUnixTimeMilliseconds();

    /// <summary>Reclaims as soon as a slot frees up when the last heartbeat found a dead consumer's jobs and had no room for them.</summary>
    private bool ReclaimIfWaiting(IDatabase db)
    {
        if (!_reclaimWaiting || !Taking || _intake!.FreeSlots <= 0)
        {
            return false;
        }

        try
        {
            Reclaim(db);
        }
        catch (Exception ex) when (ex is RedisException or TimeoutException)
        {
            _adoptOwn = true;
            throw;
        }

        return false;
    }

    /// <summary>Runs what is due and returns how long the thread may sleep.</summary>
    private TimeSpan Housekeep(IDatabase db)
    {
        long now = _time.GetTimestamp();
        if (now >= _nextCleanup)
        {
            RemoveIdleConsumers(db);
            _nextCleanup = now + Ticks(TimeSpan.FromMinutes(1));
        }

        if (_stats is null || (Volatile.Read(ref _statsWantedUntil) > now && _time.GetUtcNow() - _stats.ReadAt >= StatsMaxAge))
        {
            ReadStats(db);
        }

        if (_moreWaiting && _intake!.FreeSlots > 0 && Taking)
        {
            return TimeSpan.Zero;
        }

        // A due poll with no room to fetch into waits for a job to leave the prefetch, not for the clock: the clock says
        // "due" on every turn until a fetch moves it on, and the thread would spin for as long as the prefetch stays full
        // (a paused queue, or jobs slower than the poll interval).
        long next = Math.Min(_nextHeartbeat, _nextCleanup);
        if (Taking && !_prefetchFull)
        {
            next = Math.Min(next, _nextPoll);
        }

        var wait = next <= now ? TimeSpan.Zero : _time.GetElapsedTime(now, next);
        if (Volatile.Read(ref _statsWantedUntil) > now)
        {
            wait = Min(wait, StatsMaxAge);
        }

        wait = RoomRetryIn() is { } room2 ? Min(wait, room2) : wait;

        // The thread sleeps in whole milliseconds (ManualResetEventSlim.Wait truncates): a wait cut down to them wakes it
        // a fraction of a millisecond early, and then one under a millisecond does not sleep at all, so the thread went
        // round its loop until the time came (hundreds to thousands of turns before a poll or heartbeat, about 100 bytes
        // allocated each). Rounded up, it wakes at most a millisecond late.
        return TimeSpan.FromMilliseconds(Math.Ceiling(wait.TotalMilliseconds));
    }

    /// <summary>
    /// Decides whether this turn's round fetches: when a notification came, the last fetch filled the room, the poll is
    /// due, or the round stores new jobs (read back in the same round trip). Returns the room to fetch into, or 0.
    /// </summary>
    private int FetchRoom(bool enqueuing, long now)
    {
        _prefetchFull = false;
        if (!Taking || !(_nudged || _moreWaiting || enqueuing || now >= _nextPoll))
        {
            return 0;
        }

        // Asked for before looking, with a full fence between: a job that leaves the prefetch after the look sees the
        // request and signals (TryStart), so the wait for room (Housekeep) is never missed.
        _wantRoom = true;
        Interlocked.MemoryBarrier();
        int room = _intake!.FreeSlots;
        if (room <= 0)
        {
            _prefetchFull = true;
            return 0;
        }

        if (_reclaimWaiting)
        {
            // The next free slot is a dead consumer's job's (ReclaimIfWaiting, on the next turn).
            _wantRoom = false;
            Signal();
            return 0;
        }

        _wantRoom = false;
        _nudged = false;
        return room;
    }

    /// <summary>
    /// Takes in what a round fetched: the entries into the prefetch, and when to poll next. A refused promotion of due
    /// retries still hands over what was read; a refused fetch (the group is gone) is tried again on a later turn.
    /// </summary>
    private void FinishFetch(int room, long sentAt, RedisResult nextDue, StreamEntry[] entries, string epoch, string? error)
    {
        _moreWaiting = entries.Length == room;
        if (error is null)
        {
            long nextDueMs = (long)nextDue;
            _nextPoll = sentAt + Ticks(_durable.PollInterval);
            if (nextDueMs >= 0)
            {
                _nextPoll = Math.Min(_nextPoll, sentAt + Ticks(TimeSpan.FromMilliseconds(nextDueMs)));
            }
        }
        else
        {
            _nudged = true;
        }

        Accept([.. entries.Select(static entry => DurableEntry.Parse(entry, deliveries: 1))], epoch);
    }

    /// <summary>
    /// After a call that may have handed this consumer entries lost its reply (no answer in time, or the connection
    /// dropped after Redis ran it), takes back what is pending here but not held. Otherwise those jobs would wait for a
    /// claim timeout and another consumer, and a job whose enqueue was in the same call waits for nobody: its caller,
    /// told it may not have been stored, enqueued it again.
    /// </summary>
    private bool AdoptOwnIfNeeded(IDatabase db)
    {
        if (!_adoptOwn)
        {
            return false;
        }

        var orphans = new List<string>();
        RedisValue from = "-";
        while (true)
        {
            var page = db.StreamPendingMessages(Keys.Stream, RedisStreamKeys.Group, BatchSize, ConsumerName, from);
            orphans.AddRange(page.Select(static p => (string)p.MessageId!).Where(id => !_held.Contains(id)));
            if (page.Length < BatchSize)
            {
                break;
            }

            from = "(" + (string)page[^1].MessageId!;
        }

        int adopted = 0;
        foreach (var chunk in orphans.Chunk(BatchSize))
        {
            var reply = AdoptCall.Run(db, Keys, ConsumerName, chunk);
            Accept(reply.Found, reply.Epoch);
            adopted += reply.Found.Count;
        }

        _adoptOwn = false;
        if (adopted > 0)
        {
            _logger.TryLog(static (l, s) => Log.Adopted(l, s._queue, s.adopted), (_queue, adopted));
        }

        return false;
    }

    /// <summary>
    /// Takes fetched entries, read under <paramref name="epoch"/> (see <see cref="RedisStreamKeys.Epoch"/>): each is held
    /// (so heartbeats cover it) before anything else can fail, then read into the prefetch; one that cannot be read is
    /// dead-lettered (through the outcome queue) and never runs.
    /// </summary>
    private void Accept(List<DurableEntry> entries, string epoch)
    {
        long nowMs = _time.GetUtcNow().ToUnixTimeMilliseconds();
        foreach (var entry in entries)
        {
            entry.Epoch = epoch;
            _held.Hold(entry);
        }

        foreach (var entry in entries)
        {
            var type = _types.Resolve(entry.Payload, out string typeName, out var json);
            if (type is null)
            {
                // A newer version's job (a rolling deploy), or a foreign writer's: never run here; handed back for an
                // instance that runs the type, or dead-lettered once none has for UnknownJobTypeTimeout.
                _outcomes.UnknownType(entry, typeName);
            }
            else if (!type.TryRead(json, out var payload, out var unreadable))
            {
                string error = $"Durable queue '{_queue}': {unreadable}";
                _logger.TryLog(static (l, s) => Log.Unreadable(l, s._queue, s.StreamId, s.error), (_queue, entry.StreamId, error));
                _outcomes.DeadLetter(entry, error, "unreadable");
            }
            else if (!_intake!.TryAccept(type.Invoker, entry, payload, entry.Attempt, WaitedInStream(entry.StreamId, nowMs)))
            {
                // The queue stopped taking jobs between the fetch and now: hand it straight back.
                _outcomes.Release(entry);
            }
        }
    }

    /// <summary>
    /// How long an entry waited in the stream: the time in its id (when Redis added it, by Redis's clock) to now (this
    /// host's clock). Clock skew between the two shifts it; a negative result counts as no wait.
    /// </summary>
    internal static TimeSpan WaitedInStream(string streamId, long nowUnixMs)
    {
        int dash = streamId.IndexOf('-');
        return long.TryParse(dash < 0 ? streamId : streamId.AsSpan(0, dash), System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out long addedMs)
            && nowUnixMs > addedMs
            ? TimeSpan.FromMilliseconds(nowUnixMs - addedMs)
            : TimeSpan.Zero;
    }

    private void KeepAlive(IDatabase db)
    {
        if (_held.IsEmpty)
        {
            return;
        }

        int lostCount = 0;
        int restored = 0;
        int running = 0;
        foreach (var chunk in _held.Snapshot().Where(static e => !e.Vanished).Chunk(BatchSize))
        {
            var result = KeepAliveCall.Run(db, Keys, ConsumerName, [.. chunk.Select(static e => (e.StreamId, e.Epoch))]);
            foreach (string id in result.Gone)
            {
                // Redis lost it (restart without persistence, failover, flush); this process still holds the payload,
                // and the producer was told it was stored. Not started: stored again now as a new entry (Release);
                // running: its outcome stores it (a retry, a dead letter, a hand-back; a success needs nothing).
                // Either way the script is told it was lost rather than asked again: by then anything may have
                // happened to the new stream (a completion there hides the loss from the max-deleted-entry-id test).
                if (_held.TryGet(id, out var entry))
                {
                    entry.Vanished = true;
                    if (entry.TryTakeBack())
                    {
                        _outcomes.Release(entry);
                        restored++;
                    }
                    else
                    {
                        running++;
                    }
                }
            }

            foreach (string streamId in result.Lost)
            {
                // Settled meanwhile (its outcome is on its way) or taken over by another consumer.
                if (_held.MarkLost(streamId))
                {
                    lostCount++;
                }
            }
        }

        if (lostCount > 0)
        {
            _logger.TryLog(static (l, s) => Log.ClaimsLost(l, s._queue, s.lostCount), (_queue, lostCount));
        }

        if (restored + running > 0)
        {
            _logger.TryLog(static (l, s) => Log.Vanished(l, s._queue, s.restored + s.running, s.restored, s.running), (_queue, restored, running));
        }
    }

    /// <summary>
    /// Takes over entries whose consumer stopped refreshing them. They are the oldest work, so they come before new
    /// entries: with no room now, it only looks, and when something waits the next free slot is kept for it (fetching
    /// waits, see <see cref="FetchRoom"/>), so a dead consumer's jobs run within about a claim timeout however long the
    /// backlog behind them.
    /// </summary>
    private void Reclaim(IDatabase db)
    {
        int room = _intake!.FreeSlots;
        var result = ReclaimCall.Run(db, Keys, ConsumerName, (long)_durable.ClaimTimeout.TotalMilliseconds, _reclaimCursor, Math.Max(0, room), _durable.MaxDeliveries, FinishedRetentionMs);
        if (room <= 0)
        {
            _reclaimWaiting = result.IdleWaiting;
            return;
        }

        _reclaimWaiting = false;

        // A poison entry dead-lettered or a cancelled job ended here: the next round trims (the count cap may be passed).
        if (result.EndedAny)
        {
            _trim.Ended();
        }
        _reclaimCursor = result.Cursor;
        int claimed = result.Claimed.Count;
        Accept(result.Claimed, result.Epoch);

        if (claimed > 0)
        {
            _logger.TryLog(static (l, s) => Log.Reclaimed(l, s._queue, s.claimed), (_queue, claimed));
        }
    }

    private void RemoveIdleConsumers(IDatabase db)
    {
        // Idle for two claim timeouts with nothing pending: that consumer's process is gone (a live one fetches at
        // least every PollInterval, which resets its idle time).
        long minIdle = (long)Math.Max(_durable.ClaimTimeout.TotalMilliseconds * 2, 60_000);
        string[] removed = RemoveIdleConsumersCall.Run(db, Keys, ConsumerName, minIdle);
        if (removed.Length > 0)
        {
            _logger.TryLog(static (l, s) => Log.ConsumersRemoved(l, s._queue, s.Item2), (_queue, string.Join(", ", removed)));
        }
    }

    private void ReadStats(IDatabase db)
    {
        var r = StatsCall.Run(db, Keys);
        var consumers = r.Consumers
            .Select(c => new DurableConsumer(c.Name, c.Pending, TimeSpan.FromMilliseconds(c.IdleMs), c.Name == ConsumerName))
            .ToArray();
        _stats = new DurableQueueStats(
            ConsumerName,
            StreamLength: r.Length,
            Pending: r.Pending,
            Lag: r.Lag,
            DelayedRetries: r.DelayedRetries,
            DeadLetters: r.DeadLetters,
            Scheduled: r.Scheduled,
            Consumers: consumers,
            ReadAt: _time.GetUtcNow());
    }

    private long Ticks(TimeSpan span) => (long)(span.TotalSeconds * _time.TimestampFrequency);

    private static TimeSpan Min(TimeSpan a, TimeSpan b) => a < b ? a : b;
}
