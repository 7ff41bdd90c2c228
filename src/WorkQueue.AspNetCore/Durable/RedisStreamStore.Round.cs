using System.Globalization;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable.Calls;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// One round trip a turn: the next batch of enqueues, the next batch of acknowledgements and, when due, a fetch travel
/// in one script call (<see cref="DurableScripts.Round"/>; with a fetch, the script and the read in one
/// <c>MULTI</c>/<c>EXEC</c>, see <see cref="RoundAndRead"/>), where they were three calls, each waiting for its answer
/// (and under <c>appendfsync always</c> for its own fsync).
/// </summary>
/// <remarks>
/// The parts stay as isolated as separate calls were, and each answers per element (see <c>round.lua</c>): an element the
/// script cannot read fails alone, a write Redis refuses ends its part only, and the reply says exactly which enqueues
/// were stored (each caller is told its own outcome) and whether the acknowledgements were applied (applied ones are
/// forgotten here, refused ones put back for a later turn, unreadable ones dropped and logged); a refused fetch is tried
/// again. The script fails as a whole only before its first write, so a call Redis answered with an error stored and
/// acknowledged nothing: its callers are told the job was not stored (and, when Redis cannot be reached, every queued
/// caller, see <see cref="Stage"/>). A call whose answer never came (a timeout, a
/// connection dropped after sending it) leaves the outcome unknown: its callers get
/// <see cref="EnqueueOutcomeUnknownException"/> (not "not stored"), its acknowledgements are put back (sending one
/// again is harmless: the script finds it acknowledged and records nothing twice), and the fetch is tried again. If
/// Redis ran the call and only its reply was lost, what the fetch read is pending here unheld: it is taken back once
/// Redis answers (<see cref="AdoptOwnIfNeeded"/>), so it runs then, not after a claim timeout. Each round also answers
/// Redis's time, from which <see cref="RedisClockOffset"/> measures how far Redis's clock is from this process's (durable
/// recurring jobs fire on Redis's clock).
/// <para>
/// With <see cref="DurableQueueOptions.ReplicaAcknowledgements"/>, a round that carries enqueues is followed by Redis's
/// <c>WAIT</c> on the same connection, sent before the round's reply is read (pipelined: still one round trip, plus the
/// replicas' acknowledgement): the enqueues complete once that many replicas have everything the round wrote, else
/// fail with <see cref="EnqueueNotReplicatedException"/> (they are stored on the primary). Rounds without enqueues send
/// no <c>WAIT</c>: a settle lost in a failover makes its job run again, never lost.
/// </para>
/// </remarks>
internal sealed partial class RedisStreamStore
{
    /// <summary>Gets how long an ended job's record is kept in Redis (zero: none), from the queue's FinishedJobRetention and MaxFinishedJobs.</summary>
    internal long FinishedRetentionMs => JobRecord.RetentionMs(_options);

    /// <summary>Sends this turn's round; returns whether it stored or acknowledged anything (there may be more).</summary>
    private bool SendRound(IDatabase db)
    {
        var enqueues = TakeBatch();
        var completed = _outcomes.TakeCompleted(BatchSize);
        long now = _time.GetTimestamp();
        int room = FetchRoom(enqueuing: enqueues is not null, now);

        // When the round trims, see TrimSchedule. An instance that fetches nothing (paused, not consuming) sends a round
        // only to trim, when it wakes (at least every heartbeat): ended records have no expiry of their own, and cancels
        // still end jobs while it is paused. So does one whose prefetch is full (every slot taken by long jobs): it
        // would fetch, but has no room to.
        bool trim = _trim.IsDue(now, acknowledging: completed is not null, taking: Taking);
        if (enqueues is null && completed is null && room == 0 && ((Taking && !_prefetchFull) || !trim))
        {
            return false;
        }

        _trim.RoundSending(trim, acknowledging: completed is not null);

        // At most BatchSize payloads and BatchSize ids: Lua's unpack (of the ids) takes thousands, and Redis takes far
        // longer argument lists, so the round stays one short call however full both queues are.
        int count = enqueues?.Count ?? 0;

        // Most jobs are plain: enqueued due now without a key, completed on their first attempt without a cancel. Their
        // empty specs and keys, and the job id, attempt and cancel flag of their acknowledgements, are not sent. Whether
        // an acknowledgement is plain is read once: a cancel by id can mark an entry until it is forgotten.
        bool plainEnqueues = enqueues is not null && enqueues.TrueForAll(static e => e.Spec.Length == 0 && e.Key.Length == 0);
        int keyed = 0;
        int plain = 0;
        bool[]? plainAcks = null;
        if (completed is not null)
        {
            plainAcks = new bool[completed.Count];
            for (int i = 0; i < completed.Count; i++)
            {
                keyed += completed[i].IdempotencyKey is null ? 0 : 1;
                plainAcks[i] = IsPlain(completed[i]);
                plain += plainAcks[i] ? 1 : 0;
            }
        }

        var args = new RoundArguments(count, plainEnqueues, keyed, plain, (completed?.Count ?? 0) - plain, recordsKept: FinishedRetentionMs > 0);
        args.SetSettings(
            RedisStreamKeys.Group,
            ConsumerName,
            _options.Capacity,
            Keys.NudgeName,
            room,
            PromoteLimit,
            (long)_options.IdempotencyKeyRetention.TotalMilliseconds,
            FinishedRetentionMs,
            _options.MaxFinishedJobs,
            trim);
        for (int i = 0; i < count; i++)
        {
            args.AddEnqueue(enqueues![i].Payload, enqueues[i].Spec, enqueues[i].Key);
        }

        if (completed is not null)
        {
            for (int i = 0; i < completed.Count; i++)
            {
                var entry = completed[i];
                if (entry.IdempotencyKey is { } key)
                {
                    args.AddRelease(key, entry.JobId, entry.StreamId);
                }

                if (plainAcks![i])
                {
                    args.AddPlainAck(entry.StreamId, entry.EnqueuedAtMs, StartedAt(entry));
                }
                else
                {
                    args.AddAck(entry.StreamId, entry.JobId, entry.Attempt, entry.EnqueuedAtMs, StartedAt(entry), entry.CancelRequested, entry.JobType);
                }
            }
        }

        long nudgeRound = enqueues is null ? 0 : _ownNudges.NextRound();
        if (nudgeRound != 0)
        {
            args.NudgeTag = NudgeTag(nudgeRound);
        }

        bool fetchedAll = false;
        try
        {
            return RunRound(db, args, enqueues, completed, plainAcks, room, now, trim, waitForReplicas: enqueues is not null && _durable.ReplicaAcknowledgements > 0, ref fetchedAll);
        }
        finally
        {
            // Whatever became of the round (a failure, a reply never read: needed), its nudge is settled here.
            if (nudgeRound != 0 && _ownNudges.Resolve(nudgeRound, fetchedAll))
            {
                OnNudged();
            }
        }
    }

    /// <summary>Whether a completed entry is acknowledged with its stream id and times only: its own job, first attempt, no cancel, the queue's default type.</summary>
    private static bool IsPlain(DurableEntry entry) =>
        entry.Attempt == 1 && !entry.CancelRequested && entry.JobId == entry.StreamId && entry.JobType is null;

    /// <summary>Sends the round and settles its parts; <paramref name="fetchedAll"/> tells whether its read took every undelivered entry.</summary>
    private bool RunRound(IDatabase db, RoundArguments args, List<PendingEnqueue>? enqueues, List<DurableEntry>? completed, bool[]? plainAcks, int room, long now, bool trim, bool waitForReplicas, ref bool fetchedAll)
    {
        RoundReply result;
        var sent = _clock.Start();
        StreamEntry[]? read = null;
        string? readError = null;
        Task<RedisResult>? wait = null;
        try
        {
            (result, read, readError) = room > 0 ? RoundAndRead(db, args, waitForReplicas, ref room, ref wait)
                : waitForReplicas ? (RoundThenWait(db, args, ref wait), null, null)
                : (Round(db, args), null, null);
        }
        catch (Exception ex) when (ex is RedisException or TimeoutException)
        {
            if (enqueues is not null)
            {
                FailEnqueues(enqueues, ex);
            }

            if (completed is not null)
            {
                _outcomes.PutBackCompleted(completed);
            }

            if (room > 0)
            {
                // Whether or not it read anything: entries it may have read are pending here, unheld, and are taken
                // back once Redis answers again (AdoptOwnIfNeeded).
                _nudged = true;
                _adoptOwn = true;
            }

            _trim.RoundFailed(trim);
            throw;
        }

        _clock.Sample(sent, result.RedisTimeMs);

        if (trim)
        {
            _trim.Trimmed(now, result.TrimAgainMs);
        }

        // Each part is settled whatever the others' fate; a refused part fails the pass (backoff, readiness, log).
        bool stored = false;
        string? enqueueError = result.EnqueueError;
        string? ackError = result.AckError;
        string? fetchError = result.FetchError ?? readError;
        if (enqueues is not null)
        {
            stored |= FinishEnqueues(enqueues, result.EnqueueAnswers, wait is null ? null : ReplicasAcknowledged(wait));
        }

        if (completed is not null)
        {
            stored |= _settler.FinishCompleted(completed, plainAcks!, result.AcksApplied, result.InvalidAcks);
        }

        if (room > 0)
        {
            // Read after this round's adds, in the same MULTI/EXEC: a read short of the room took every undelivered entry.
            fetchedAll = fetchError is null && read is not null && read.Length < room;
            FinishFetch(room, now, result.NextDue, read ?? [], result.Epoch, fetchError);
        }

        PartFailed(enqueueError);
        PartFailed(ackError);
        PartFailed(result.TrimError);
        PartFailed(fetchError);
        return stored;
    }

    /// <summary>The round script's SHA-1, as <c>EVALSHA</c> names it.</summary>
    private static readonly byte[] RoundSha = System.Security.Cryptography.SHA1.HashData(System.Text.Encoding.UTF8.GetBytes(DurableScripts.Round));

    private bool _roundLoaded;

    private RedisKey[]? _roundKeys;

    /// <summary>The round's keys, made once: no call changes them, and the round is sent several times a job.</summary>
    private RedisKey[] RoundKeys => _roundKeys ??= [Keys.Stream, Keys.Delayed, Keys.Scheduled, Keys.Recurring, Keys.Ids, Keys.Epoch];

    /// <summary>
    /// The round with a fetch: the script, then the read, in one <c>MULTI</c>/<c>EXEC</c> (one round trip, atomic as one
    /// script). The read is not in the script because Lua would convert every entry it read to tables and back. Redis
    /// runs the read even when the script fails: a failed script throws here after the read may have handed this
    /// consumer entries, which the caller's failure path takes back (<see cref="AdoptOwnIfNeeded"/>). A refused read
    /// (the group is gone) is that part's error.
    /// </summary>
    private (RoundReply Result, StreamEntry[]? Read, string? ReadError) RoundAndRead(IDatabase db, RoundArguments args, bool waitForReplicas, ref int room, ref Task<RedisResult>? wait)
    {
        // EVALSHA by its hash: StackExchange.Redis sends a script text queued in a transaction as EVAL, the whole text
        // each time. The hash overload takes the keys and arguments as they are; the generic ExecuteAsync took them
        // boxed in an object[].
        if (!_roundLoaded)
        {
            db.Execute("SCRIPT", "LOAD", DurableScripts.Round);
            _roundLoaded = true;
        }

        var transaction = db.CreateTransaction();
        var round = transaction.ScriptEvaluateAsync(RoundSha, RoundKeys, args.Values);

        // The typed read, not ExecuteAsync("XREADGROUP", ...), which parses the command's name, boxes the arguments
        // and answers a tree of RedisResult to take apart again.
        var fetch = transaction.StreamReadGroupAsync(Keys.Stream, RedisStreamKeys.Group, ConsumerName, StreamPosition.NewMessages, room);
        RoundReply result;
        try
        {
            if (waitForReplicas)
            {
                // Sent before the transaction's reply is awaited, so it follows it on the connection (one round trip).
                var executed = transaction.ExecuteAsync();
                wait = SendWait(db);
                executed.GetAwaiter().GetResult();
            }
            else
            {
                transaction.Execute();
            }

            result = new RoundReply((RedisResult[])round.GetAwaiter().GetResult()!);
        }
        catch (RedisServerException ex) when (ex.Message.StartsWith("NOSCRIPT", StringComparison.Ordinal) || ex.Message.StartsWith("EXECABORT", StringComparison.Ordinal))
        {
            // The round did not run: Redis lost its scripts (a restart; the read did run), or refused a command as it
            // was queued (an ACL without XREADGROUP, say; nothing ran). It is sent again alone, without the fetch, so
            // a refused read cannot fail the enqueues and acknowledgements (the client falls back to EVAL); what a
            // read took is pending here and taken back, and the fetch is tried again after the pass's backoff.
            _nudged = true;
            _adoptOwn = true;
            _roundLoaded = false;
            room = 0;
            args.FetchCount = 0;
            string? readError = ex.Message.StartsWith("EXECABORT", StringComparison.Ordinal) ? QueueingError(fetch) ?? ex.Message : null;
            if (waitForReplicas)
            {
                // That WAIT followed a round that did not run: the one sent behind the round sent again is the one read.
                Forget(wait);
                wait = null;
                return (RoundThenWait(db, args, ref wait), null, readError);
            }

            return (Round(db, args), null, readError);
        }
        catch
        {
            Forget(wait);
            wait = null;
            throw;
        }

        try
        {
            return (result, fetch.GetAwaiter().GetResult(), null);
        }
        catch (RedisServerException ex)
        {
            return (result, null, ex.Message);
        }
    }

    /// <summary>Why Redis refused to queue the read, when it did.</summary>
    private static string? QueueingError(Task fetch) =>
        fetch.IsFaulted ? fetch.Exception!.GetBaseException().Message : null;

    /// <summary>
    /// The round alone, then Redis's <c>WAIT</c> for <see cref="DurableQueueOptions.ReplicaAcknowledgements"/>, pipelined
    /// (<paramref name="wait"/> is its reply, read by the caller). The round is sent by hash: the client would send a
    /// script Redis lacks again as <c>EVAL</c> once the <c>NOSCRIPT</c> came back, after the <c>WAIT</c>, which would then
    /// not cover its writes. So the script is loaded first, and after a <c>NOSCRIPT</c> (a restart since) loaded and sent
    /// again once, with a new <c>WAIT</c>.
    /// </summary>
    private RoundReply RoundThenWait(IDatabase db, RoundArguments args, ref Task<RedisResult>? wait)
    {
        for (int attempt = 0; ; attempt++)
        {
            if (!_roundLoaded)
            {
                db.Execute("SCRIPT", "LOAD", DurableScripts.Round);
                _roundLoaded = true;
            }

            var round = db.ScriptEvaluateAsync(RoundSha, RoundKeys, args.Values);
            wait = SendWait(db);
            try
            {
                return new RoundReply((RedisResult[])round.GetAwaiter().GetResult()!);
            }
            catch (RedisServerException ex) when (attempt == 0 && ex.Message.StartsWith("NOSCRIPT", StringComparison.Ordinal))
            {
                // Nothing ran: Redis lost its scripts.
                Forget(wait);
                wait = null;
                _roundLoaded = false;
            }
            catch
            {
                Forget(wait);
                wait = null;
                throw;
            }
        }
    }

    /// <summary>
    /// Sends <c>WAIT {replicas} {timeout}</c> to the server that holds the queue's keys (the one the round went to, on
    /// the same connection, so it counts the round's writes; in a cluster, a command without a key would go to any
    /// primary). Redis answers how many replicas acknowledged everything this connection wrote, once that many have
    /// or the timeout has passed, and answers the connection's later commands only then.
    /// </summary>
    private Task<RedisResult> SendWait(IDatabase db)
    {
        try
        {
            return db.Multiplexer.GetServer(Keys.Stream).ExecuteAsync(
                "WAIT",
                _durable.ReplicaAcknowledgements,
                (long)Math.Ceiling(_durable.ReplicaAcknowledgementTimeout.TotalMilliseconds));
        }
        catch (Exception ex)
        {
            // The round is already sent: a WAIT that could not be sent (no server for the key now, a connection gone)
            // leaves the replication unconfirmed; it must not pass for the round's own failure ("not stored").
            return Task.FromException<RedisResult>(ex);
        }
    }

    /// <summary>Reads the <c>WAIT</c>'s answer: how many replicas acknowledged the round, or why that is not known.</summary>
    private static ReplicaAcknowledgement ReplicasAcknowledged(Task<RedisResult> wait)
    {
        try
        {
            return new ReplicaAcknowledgement((int)wait.GetAwaiter().GetResult(), null);
        }
        catch (Exception ex)
        {
            // Not sent, not answered (a timeout, a dropped connection) or refused (an ACL without WAIT, a replica): the
            // enqueues are stored (the round answered), their replication unconfirmed.
            return new ReplicaAcknowledgement(0, ex);
        }
    }

    /// <summary>Observes a reply that will not be read, so its failure is not reported as an unobserved task exception.</summary>
    private static void Forget(Task? task) =>
        task?.ContinueWith(static t => _ = t.Exception, CancellationToken.None, TaskContinuationOptions.OnlyOnFaulted | TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);

    /// <summary>How many replicas acknowledged a round's writes (<c>WAIT</c>), or the error that left it unknown (then 0).</summary>
    private readonly record struct ReplicaAcknowledgement(int Count, Exception? Error);

    /// <summary>The round alone, without a read (the client sends it by hash, or as <c>EVAL</c> when Redis lacks it).</summary>
    private RoundReply Round(IDatabase db, RoundArguments args) =>
        new((RedisResult[])db.ScriptEvaluate(DurableScripts.Round, RoundKeys, args.Values)!);

    /// <summary>Redis answered and refused one part of the round: the pass fails as a stage's would (a missing group is made again).</summary>
    private void PartFailed(string? error)
    {
        if (error is not null)
        {
            OnRedisError(new RedisServerException(RedisErrorKind.Unknown, CommandFlags.None, error));
        }
    }
}
