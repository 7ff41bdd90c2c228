namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The Lua scripts of the durable-queue protocol. Each step that moves a job between places is one script, so a crash
/// between two commands can neither lose nor duplicate it, and every script touches only the queue's own keys (one hash
/// slot). Times come from Redis's own clock (<c>TIME</c>), so instances with skewed clocks agree on due times.
/// </summary>
/// <remarks>
/// Stream entry fields: <c>p</c> the payload (JSON), <c>a</c> the attempt (absent on a first attempt, which every reader,
/// of this version and the one before, takes as 1; written from the second on), <c>t</c> when the job was
/// first enqueued (Unix ms, Redis time), <c>j</c> the job's id (the stream id it was first stored under; absent on a first
/// attempt, whose job id is its own stream id), <c>k</c> the job's idempotency key (absent without one). A delayed retry
/// or scheduled job is a sorted-set member <c>jobId|attempt|enqueuedAt|payload</c> scored by its due time; with a key, the
/// payload is preceded by <c>\u0001key\u0001</c> (a key has no control characters, and JSON never starts with one).
/// A payload of a job type other than the queue's default one is <c>{type name}\u001f{json}</c> wherever it is stored
/// (see <see cref="JobTypeEnvelope"/>; <c>typeOf</c> in <c>includes/records.lua</c> reads the name).
/// <para>
/// An idempotency key is a string <c>{prefix}:{name}:key:{key}</c> (the queue's hash tag, so the queue's slot) whose
/// value is <c>jobId|where</c>: where the job is now, a stream id, <c>z{due ms}</c> in the delayed set, or <c>done</c>
/// (with an expiry: the retention after a success). Every script that moves a job moves its key with it; one that ends
/// it releases the key, if the key still names that job. These key names are built inside the scripts from the stream's
/// name rather than declared: they share the queue's hash slot, which is what Redis Cluster routes by.
/// </para>
/// <para>
/// A job's record is a header of fields split by U+001F (state, cancel asked '1' or '', ended at, attempt, enqueued
/// at, consumer, started at, error, and in an ended record of a job type other than the queue's default one its
/// type's name) then, for each failed attempt, U+001E and its fields (number, consumer, started
/// at, ended at, outcome, error). A live job has one, a string <c>{prefix}:{name}:job:{job id}</c>, only once
/// something rare happened to it (an attempt failed, a cancel was asked). An ended one (state <c>S</c>ucceeded,
/// <c>D</c>ead-lettered or <c>C</c>anceled) has its record as the field <c>{job id}</c> of the hash
/// <c>{prefix}:{name}:ended</c> (its live string merged in and deleted) and is listed in
/// <c>{prefix}:{name}:ended:{state}</c> scored by its end; the round's trim drops both together (the retention, the
/// count cap), and a sweep of the hash drops records older than the retention that no list holds. Records have no
/// expiry of their own: one key with an expiry per job cost a write per success and an active-expiry deletion each,
/// where the hash takes one variadic HSET per round and loses them in batches. A record string holding an ended record
/// (written by the version before the hash, with an expiry) is still read (<c>recordOf</c>, <see cref="FindJobs"/>).
/// <c>{prefix}:{name}:at:{job id}</c> points to where a live job is when that is not its own stream id: a newer stream
/// id (retried, promoted, handed back) or <c>z{due ms}</c> (waiting for a retry). Live states are read from where the
/// job is (see <see cref="Status"/>), so they cost no write.
/// </para>
/// </remarks>
internal static class DurableScripts
{
    /// <summary>The script in <c>Durable/Scripts/round.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string Round = DurableScriptLoader.Load("round");

    /// <summary>The script in <c>Durable/Scripts/registerRecurring.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string RegisterRecurring = DurableScriptLoader.Load("registerRecurring");

    /// <summary>The script in <c>Durable/Scripts/keepAlive.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string KeepAlive = DurableScriptLoader.Load("keepAlive");

    /// <summary>The script in <c>Durable/Scripts/adopt.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string Adopt = DurableScriptLoader.Load("adopt");

    /// <summary>The script in <c>Durable/Scripts/reclaim.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string Reclaim = DurableScriptLoader.Load("reclaim");

    /// <summary>The script in <c>Durable/Scripts/scheduleRetry.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string ScheduleRetry = DurableScriptLoader.Load("scheduleRetry");

    /// <summary>The script in <c>Durable/Scripts/postpone.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string Postpone = DurableScriptLoader.Load("postpone");

    /// <summary>The script in <c>Durable/Scripts/deadLetter.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string DeadLetter = DurableScriptLoader.Load("deadLetter");

    /// <summary>The script in <c>Durable/Scripts/release.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string Release = DurableScriptLoader.Load("release");

    /// <summary>The script in <c>Durable/Scripts/requeue.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string Requeue = DurableScriptLoader.Load("requeue");

    /// <summary>The script in <c>Durable/Scripts/removeIdleConsumers.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string RemoveIdleConsumers = DurableScriptLoader.Load("removeIdleConsumers");

    /// <summary>The script in <c>Durable/Scripts/removeConsumerIfEmpty.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string RemoveConsumerIfEmpty = DurableScriptLoader.Load("removeConsumerIfEmpty");

    /// <summary>The script in <c>Durable/Scripts/createGroup.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string CreateGroup = DurableScriptLoader.Load("createGroup");

    /// <summary>The script in <c>Durable/Scripts/cancel.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string Cancel = DurableScriptLoader.Load("cancel");

    /// <summary>The script in <c>Durable/Scripts/settleCanceled.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string SettleCanceled = DurableScriptLoader.Load("settleCanceled");

    /// <summary>The script in <c>Durable/Scripts/status.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string Status = DurableScriptLoader.Load("status");

    /// <summary>The script in <c>Durable/Scripts/listScheduled.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string ListScheduled = DurableScriptLoader.Load("listScheduled");

    /// <summary>The script in <c>Durable/Scripts/stats.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string Stats = DurableScriptLoader.Load("stats");

    /// <summary>The script in <c>Durable/Scripts/findJobs.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string FindJobs = DurableScriptLoader.Load("findJobs");

    /// <summary>The script in <c>Durable/Scripts/serverInfo.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string ServerInfo = DurableScriptLoader.Load("serverInfo");

    /// <summary>The script in <c>Durable/Scripts/checkAccess.lua</c>: its header says what it does, its KEYS, ARGV and reply.</summary>
    public static readonly string CheckAccess = DurableScriptLoader.Load("checkAccess");
}
