using System.Globalization;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;

namespace WorkQueue.AspNetCore.Tests.Durable.Model;

/// <summary>
/// Drives the durable protocol's scripts (<see cref="DurableScripts"/>) one call at a time, with the KEYS and ARGV the
/// store builds (<c>RedisStreamStore.*.cs</c>; each method names the code it mirrors). The store itself cannot be driven
/// step by step: its thread interleaves heartbeats, reclaims, polls and outcomes by its own timers, and cancels reach
/// it over pub/sub on other threads. Every write the store makes to Redis is one of these scripts, so the state Redis
/// is left in after a sequence of them is what the model test checks.
/// </summary>
internal sealed class ScriptDriver(IDatabase db, RedisStreamKeys keys, ModelSettings settings)
{
    private long _rounds;

    public IDatabase Db => db;

    public RedisStreamKeys Keys => keys;

    private RedisKey[] RoundKeys => [keys.Stream, keys.Delayed, keys.Scheduled, keys.Recurring, keys.Ids, keys.Epoch];

    /// <summary>createGroup.lua, through the store's own <see cref="CreateGroupCall"/>; returns the epoch.</summary>
    public string CreateGroup(string consumer) => CreateGroupCall.Run(db, keys, consumer);

    /// <summary>
    /// round.lua with its read, as <c>SendRound</c>/<c>RunRound</c>/<c>RoundAndRead</c> send it: the arguments built by the
    /// store's own <see cref="RoundArguments"/> (the enqueues, the key releases, the acknowledgements, plain ones in the
    /// short form), the reply read by its <see cref="RoundReply"/>, and with <paramref name="fetch"/> above 0 the script
    /// and an <c>XREADGROUP</c> in one <c>MULTI</c>/<c>EXEC</c>.
    /// </summary>
    public ModelRoundReply Round(string consumer, IReadOnlyList<EnqueueItem> enqueues, IReadOnlyList<HeldEntry> acks, int fetch, bool trim, long maxFinished)
    {
        int count = enqueues.Count;
        bool plainEnqueues = count > 0 && enqueues.All(static e => e.Spec.Length == 0 && e.Key.Length == 0);
        int keyed = acks.Count(static a => a.Key is not null);
        var plainAck = acks.Select(static a => a.Attempt == 1 && !a.CancelRequested && a.JobId == a.StreamId && JobTypeEnvelope.Read(a.Payload, out _) is null).ToArray();
        int plain = plainAck.Count(static p => p);
        var args = new RoundArguments(count, plainEnqueues, keyed, plain, acks.Count - plain, recordsKept: settings.FinishedRetentionMs > 0);
        args.SetSettings(RedisStreamKeys.Group, consumer, (int)Math.Min(int.MaxValue, settings.Capacity), keys.NudgeName, fetch, 256, settings.KeyRetentionMs, settings.FinishedRetentionMs, (int)Math.Min(int.MaxValue, maxFinished), trim);
        foreach (var e in enqueues)
        {
            args.AddEnqueue(e.Payload, e.Spec, e.Key);
        }

        for (int i = 0; i < acks.Count; i++)
        {
            var a = acks[i];
            if (a.Key is not null)
            {
                args.AddRelease(a.Key, a.JobId, a.StreamId);
            }

            if (plainAck[i])
            {
                args.AddPlainAck(a.StreamId, a.EnqueuedAt, StartedAt(a));
            }
            else
            {
                args.AddAck(a.StreamId, a.JobId, a.Attempt, a.EnqueuedAt, StartedAt(a), a.CancelRequested, JobTypeEnvelope.Read(a.Payload, out _));
            }
        }

        if (count > 0)
        {
            args.NudgeTag = string.Create(CultureInfo.InvariantCulture, $"{consumer}|{++_rounds}");
        }

        RedisResult[] result;
        StreamEntry[] read = [];
        if (fetch > 0)
        {
            var transaction = db.CreateTransaction();
            var round = transaction.ScriptEvaluateAsync(DurableScripts.Round, RoundKeys, args.Values);
            var fetched = transaction.StreamReadGroupAsync(keys.Stream, RedisStreamKeys.Group, consumer, StreamPosition.NewMessages, fetch);
            if (!transaction.Execute())
            {
                throw new InvalidOperationException("The round's MULTI/EXEC did not run.");
            }

            result = (RedisResult[])round.GetAwaiter().GetResult()!;
            read = fetched.GetAwaiter().GetResult();
        }
        else
        {
            result = (RedisResult[])db.ScriptEvaluate(DurableScripts.Round, RoundKeys, args.Values)!;
        }

        var reply = new RoundReply(result);
        return new ModelRoundReply(
            [.. reply.EnqueueAnswers.Select(static r => (string)r!)],
            reply.EnqueueError,
            reply.AcksApplied,
            reply.InvalidAcks.Length,
            reply.AckError,
            reply.NextDue.IsNull ? -1 : (long)reply.NextDue,
            reply.TrimAgainMs,
            reply.TrimError,
            reply.FetchError,
            reply.Epoch,
            reply.RedisTimeMs,
            [.. read.Select(static e => DurableEntry.Parse(e, deliveries: 1))]);
    }

    /// <summary>scheduleRetry.lua, through the store's own <see cref="ScheduleRetryCall"/>.</summary>
    public bool ScheduleRetry(string consumer, HeldEntry e, long delayMs, string error) =>
        ScheduleRetryCall.Run(db, keys, consumer, e.ToSettled(), delayMs, error);

    /// <summary>postpone.lua, through the store's own <see cref="PostponeCall"/>: a job of a type the consumer does not know, handed back unrun.</summary>
    public bool Postpone(string consumer, HeldEntry e, long delayMs) =>
        PostponeCall.Run(db, keys, consumer, e.ToSettled(), delayMs);

    /// <summary>deadLetter.lua, through the store's own <see cref="DeadLetterCall"/>.</summary>
    public bool DeadLetter(string consumer, HeldEntry e, string error, string reason) =>
        DeadLetterCall.Run(db, keys, consumer, e.ToSettled(), error, reason, settings.FinishedRetentionMs);

    /// <summary>settleCanceled.lua, through the store's own <see cref="SettleCanceledCall"/>: a cancel honoured (or one that came before the job started).</summary>
    public bool SettleCanceled(string consumer, HeldEntry e) =>
        SettleCanceledCall.Run(db, keys, consumer, e.ToSettled(), settings.FinishedRetentionMs);

    /// <summary>release.lua, through the store's own <see cref="ReleaseCall"/>; returns how many were handed back or ended.</summary>
    public long Release(string consumer, IReadOnlyList<HeldEntry> entries) =>
        ReleaseCall.Run(db, keys, consumer, [.. entries.Select(static e => e.ToSettled())], settings.FinishedRetentionMs);

    /// <summary>keepAlive.lua, through the store's own <see cref="KeepAliveCall"/>: (ids no longer this consumer's, ids Redis lost).</summary>
    public KeepAliveReply KeepAlive(string consumer, IReadOnlyList<HeldEntry> entries) =>
        KeepAliveCall.Run(db, keys, consumer, [.. entries.Select(static e => (e.StreamId, e.Epoch))]);

    /// <summary>reclaim.lua, through the store's own <see cref="ReclaimCall"/>.</summary>
    public ReclaimReply Reclaim(string consumer, long minIdleMs, string cursor, int count, int maxDeliveries) =>
        ReclaimCall.Run(db, keys, consumer, minIdleMs, cursor, count, maxDeliveries, settings.FinishedRetentionMs);

    /// <summary>cancel.lua, through the store's own <see cref="CancelCall"/>: returns the outcome code and, when asked of a running job, its consumer.</summary>
    public (long Code, string? Consumer) Cancel(string jobId, bool scheduledOnly)
    {
        var reply = CancelCall.Run(db, keys, jobId, settings.FinishedRetentionMs, scheduledOnly);
        return (reply.Code, reply.Consumer);
    }

    /// <summary>requeue.lua, through the store's own <see cref="RequeueCall"/>: the new stream id, the queue full, or no such dead letter.</summary>
    public DeadLetterRequeue Requeue(string deadId, long capacity) => RequeueCall.Run(db, keys, deadId, capacity);

    /// <summary>As <c>DeleteDeadLetterAsync</c>.</summary>
    public bool DeleteDeadLetter(string deadId) => db.StreamDelete(keys.Dead, [deadId]) == 1;

    /// <summary>registerRecurring.lua, through the store's own <see cref="RegisterRecurringCall"/> (the change c, r or x): (generation, state, schedule).</summary>
    public (long Generation, string State, string Schedule) RegisterRecurring(string id, string code, string schedule)
    {
        var change = code switch
        {
            "c" => WorkQueue.Durability.RecurringScheduleChange.Registered,
            "r" => WorkQueue.Durability.RecurringScheduleChange.Changed,
            _ => WorkQueue.Durability.RecurringScheduleChange.Removed,
        };
        var reply = RegisterRecurringCall.Run(db, keys, id, change, schedule);
        return (reply.Generation, reply.State, reply.Schedule);
    }

    /// <summary>As <c>SetPausedAsync</c>.</summary>
    public void SetRecurringPaused(string id, bool paused)
    {
        if (paused)
        {
            db.HashSet(keys.Recurring, "~" + id, "1");
        }
        else
        {
            db.HashDelete(keys.Recurring, "~" + id);
        }
    }

    /// <summary>stats.lua, through the store's own <see cref="StatsCall"/>.</summary>
    public StatsReply Stats() => StatsCall.Run(db, keys);

    /// <summary>status.lua, through the store's own <see cref="StatusCall"/>, its reply read as <c>GetJobAsync</c> reads it.</summary>
    public StatusReply Status(string jobId) => StatusCall.Run(db, keys, jobId);

    private static RedisValue StartedAt(HeldEntry e) => e.StartedAt > 0 ? e.StartedAt : RedisValue.EmptyString;
}

/// <summary>The settings a model run gives every instance (as one queue's options would).</summary>
internal sealed record ModelSettings(long Capacity, long KeyRetentionMs, long FinishedRetentionMs, long MaxFinished, int MaxDeliveries, int Prefetch)
{
    /// <summary>A reclaim's minimum idle: far above any live consumer's entry; a dead consumer's entries are made that idle.</summary>
    public const long ReclaimMinIdleMs = 100_000_000;

    /// <summary>What a dead consumer's entries are made idle for (<c>XCLAIM ... IDLE</c>), standing for the time it has been dead.</summary>
    public const long DeadIdleMs = 1_000_000_000;

    /// <summary>A delay that never comes due within a run.</summary>
    public const long FarMs = 10_000_000_000;
}

/// <summary>One enqueue of a round: its payload, its spec (see round.lua) and its idempotency key ('' none).</summary>
internal sealed record EnqueueItem(string Payload, string Spec, string Key);

/// <summary>An entry an instance holds, with what the store's <see cref="DurableEntry"/> would carry.</summary>
internal sealed record HeldEntry(string StreamId, string JobId, string Payload, int Attempt, long EnqueuedAt, string? Key, string Epoch, bool Vanished, bool CancelRequested, long StartedAt)
{
    /// <summary>What the settle scripts are told of this entry, as the store tells them of one it holds.</summary>
    public SettledEntry ToSettled() => new(StreamId, JobId, Payload, Attempt, EnqueuedAt, Key, Epoch, Vanished, CancelRequested, StartedAt);
}

/// <summary>What the model reads of a round's reply (<see cref="RoundReply"/>) and of its read.</summary>
internal sealed record ModelRoundReply(string[] Ids, string? EnqueueError, bool AcksApplied, int InvalidAcks, string? AckError, long NextDue, long TrimAgain, string? TrimError, string? FetchError, string Epoch, long Now, List<DurableEntry> Fetched);
