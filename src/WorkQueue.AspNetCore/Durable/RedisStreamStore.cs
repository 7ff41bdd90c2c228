using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using Microsoft.Extensions.Logging;
using StackExchange.Redis;
using WorkQueue.Durability;
using WorkQueue.Internal;
using WorkQueue.Telemetry;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// One durable queue's link to Redis Streams: the store its jobs come from and go back to. Every Redis call it makes
/// runs on one dedicated thread, synchronously (with StackExchange.Redis's dedicated I/O threads, a reply does not need
/// the CLR thread pool), so a starved pool cannot stop fetching, acknowledging or enqueuing. Other threads only queue
/// work for it and signal it: enqueues, which it sends in batches; outcomes, which it settles in batches; a
/// notification that another instance enqueued. A busy turn of its loop is one round trip: the next batch of enqueues,
/// of acknowledgements and a fetch in one script call.
/// </summary>
/// <remarks>
/// This file holds the thread's loop; <c>.Round.cs</c> the one call a turn; <c>.Enqueuing.cs</c> the producer side;
/// <c>.Fetching.cs</c> fetching, heartbeats, reclaiming and statistics; <c>.Settling.cs</c> the outcomes reported to it;
/// <c>.Scheduling.cs</c> scheduled jobs. The settling of outcomes has classes of its own: the entries this consumer
/// holds are <see cref="HeldEntries"/>; outcomes wait in the <see cref="OutcomeQueue"/>; the
/// <see cref="OutcomeSettler"/> sends retries, dead letters, cancels, unknown job types and hand-backs, and settles a
/// round's acknowledgements, telling the loop only that a job ended (the next round trims, see <see cref="TrimSchedule"/>)
/// and that a retry was stored (the next poll comes no later). The reading of jobs (status, cancel by id, search, dead letters) is its own
/// class, <see cref="RedisJobBrowser"/> (<see cref="Jobs"/>), which sees of this one only <see cref="ILocalConsumer"/>;
/// so is the recurring jobs' store, <see cref="RedisRecurringStore"/>, given the consumer's enqueue and whether Redis is
/// reachable as delegates.
/// </remarks>
internal sealed partial class RedisStreamStore : IJobStore, ILocalConsumer
{
    /// <summary>The most entries one script call carries of each kind (Lua's unpack limit is far above it; round trips stay short).</summary>
    internal const int BatchSize = 256;

    private static readonly TimeSpan MinStopTimeout = TimeSpan.FromSeconds(5);
    private static readonly TimeSpan StatsMaxAge = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan StatsInterest = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan ErrorLogInterval = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan RefusalRecheckInterval = TimeSpan.FromSeconds(5);

    private readonly string _queue;
    private readonly WorkQueueOptions _options;
    private readonly DurableQueueOptions _durable;
    private readonly QueueJobTypes _types;
    private readonly Func<IConnectionMultiplexer?> _redis;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly RedisClockOffset _clock;
    private readonly RedisRecurringStore _recurring;
    private readonly ManualResetEventSlim _wake = new(false);
    private readonly TaskCompletionSource _exited = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly HeldEntries _held = new();
    private readonly PassBackoff _backoff = new();
    private readonly TrimSchedule _trim;
    private IJobIntake? _intake;
    private IDatabase? _db;
    private Thread? _thread;
    private int _signaled;
    private volatile bool _fetchStopped;
    private volatile bool _paused;
    private volatile bool _stopping;
    private volatile bool _groupReady;
    private volatile bool _unreachable;
    private bool _subscribed;
    private long _nextSubscribeAttempt;
    private volatile Exception? _lastError;
    private long _lastErrorLoggedAt = long.MinValue;
    private long _stopRequestedAt;
    private long _turns;
    private long _lastTurnAt;
    private string? _refusalExplained;
    private long _refusalExplainedAt;

    public RedisStreamStore(
        string queue,
        WorkQueueOptions options,
        DurableQueueOptions durable,
        QueueJobTypes types,
        Func<IConnectionMultiplexer?> redis,
        WorkQueueMetrics? metrics,
        TimeProvider time,
        ILogger logger)
    {
        _queue = queue;
        _options = options;
        _durable = durable;
        _types = types;
        _redis = redis;
        _time = time;
        _logger = logger;
        _clock = new RedisClockOffset(time);
        Keys = new RedisStreamKeys(durable.KeyPrefix, queue);
        ConsumerName = CreateConsumerName();
        _trim = new TrimSchedule(time.TimestampFrequency, durable.HeartbeatInterval);
        _settler = new OutcomeSettler(queue, Keys, ConsumerName, options, durable, _held, _outcomes, RedisNowMs, _trim.Ended, RetryStored, logger);
        Jobs = new RedisJobBrowser(queue, Keys, types, options, () => Database, this, metrics, logger);
        Queue = new DurableWorkQueue(this, Jobs, metrics);
        _recurring = new RedisRecurringStore(queue, Keys, types, _clock, () => Database, EnqueueAsync, () => _unreachable, () => _lastError);
    }

    public string QueueName => _queue;

    public RedisStreamKeys Keys { get; }

    /// <summary>Gets this process's consumer name in the queue's group: host, process id and a random suffix, new per start.</summary>
    public string ConsumerName { get; }

    /// <summary>Gets the job types the queue reads and writes.</summary>
    public QueueJobTypes JobTypes => _types;

    /// <inheritdoc/>
    public IWorkQueue Producer => Queue;

    /// <summary>Gets the queue's producer and job control, for every job type it carries.</summary>
    public DurableWorkQueue Queue { get; }

    /// <summary>Gets the reading of the queue's jobs in Redis: status, cancel by id, scheduled jobs, search, dead letters.</summary>
    public RedisJobBrowser Jobs { get; }

    public int PrefetchCapacity => _durable.Prefetch;

    /// <summary>Gets what the warm-up does about a server that can lose this queue's jobs (<see cref="DurableServerChecks"/>).</summary>
    public RedisServerCheckMode ServerChecks => _durable.ServerChecks;

    /// <summary>Gets the prefix of the queue's keys and channels (the ACL's patterns, see <see cref="DurableAcl"/>).</summary>
    public string KeyPrefix => _durable.KeyPrefix;

    /// <summary>Gets a value indicating whether this process runs the queue's jobs (a producer-only one sends fewer commands).</summary>
    public bool Consumes => _durable.Consume;

    /// <summary>How long a failing Redis waits between two passes: at most a heartbeat, so claims are refreshed in time once it answers.</summary>
    private TimeSpan ErrorBackoff => _durable.HeartbeatInterval < TimeSpan.FromSeconds(1) ? _durable.HeartbeatInterval : TimeSpan.FromSeconds(1);

    /// <summary>How long a stop waits for Redis to take the last outcomes.</summary>
    private TimeSpan StopTimeout => _options.ShutdownGracePeriod > MinStopTimeout ? _options.ShutdownGracePeriod : MinStopTimeout;

    /// <summary>Gets a value indicating whether the last Redis call succeeded and the queue's keys have a primary (readiness).</summary>
    public bool IsConnected => _lastError is null && _groupReady && !_exited.Task.IsCompleted && NoPrimary() is null && Stuck() is null;

    /// <summary>
    /// Gets why the queue is not ready: no primary for its keys (<see cref="NoPrimary"/>, with the last error when there
    /// is one), else the last Redis error; <see langword="null"/> when the last call succeeded.
    /// </summary>
    public string? LastError => Stuck() ?? (NoPrimary() is { } missing
        ? _lastError is { } error ? $"{missing} (last error: {error.Message})" : missing
        : _lastError?.Message);

    /// <summary>
    /// Says how long the store's thread has not gone round its loop when that is longer than <c>ClaimTimeout</c>, or
    /// <see langword="null"/>. A consuming store goes round at least every heartbeat, and one Redis call lasts at most
    /// the connection's timeout (both well inside <c>ClaimTimeout</c>, as validated at startup), so a thread this late
    /// is stuck without an error: in a payload's JSON converter or constructor (payloads are read on this thread), say.
    /// Its heartbeats have stopped, so other instances will reclaim what it holds. Measured on the machine's monotonic
    /// clock, not the queue's <see cref="TimeProvider"/>: a test's fake clock must not make a live thread look stuck.
    /// </summary>
    private string? Stuck()
    {
        long lastTurn = Volatile.Read(ref _lastTurnAt);
        if (lastTurn == 0 || !_durable.Consume || _stopping || _exited.Task.IsCompleted)
        {
            return null;
        }

        var since = Stopwatch.GetElapsedTime(lastTurn);
        return since <= _durable.ClaimTimeout ? null
            : $"the store's thread for {Keys.Stream} has not gone round its loop for {since.TotalSeconds:0.#} s (ClaimTimeout {_durable.ClaimTimeout.TotalSeconds:0.#} s): " +
              "it is stuck without an error (in a payload's JSON converter or constructor, say); its heartbeats have stopped, and other instances will reclaim the jobs it holds";
    }

    /// <summary>
    /// Says why the queue's keys have no primary now, or <see langword="null"/> when the client's server for them is a
    /// connected primary. While a failover is under way (the primary died, no replica promoted yet) the client sends
    /// what it can to a replica: reads succeed there and writes fail (<c>READONLY</c>), so a pass that only read would
    /// pass for ready. Read by readiness and the snapshot, not by the store's thread.
    /// </summary>
    private string? NoPrimary()
    {
        if (_db is not { } db)
        {
            return null;
        }

        IServer server;
        try
        {
            server = db.Multiplexer.GetServer(Keys.Stream);
        }
        catch (Exception ex) when (ex is RedisException or InvalidOperationException or NotSupportedException)
        {
            return $"no primary for {Keys.Stream}: {ex.Message}";
        }

        string endpoint = Redis.RedisConnection.Format(server.EndPoint);
        return !server.IsConnected ? $"no primary for {Keys.Stream}: {endpoint} is unreachable (a failover or a restart under way?)"
            : server.IsReplica ? $"no primary for {Keys.Stream}: {endpoint} is a replica (READONLY); writes wait for a failover to promote one"
            : null;
    }

    /// <summary>Gets the number of entries this process holds: fetched and not yet settled.</summary>
    public int Held => _held.Count;

    /// <inheritdoc/>
    bool ILocalConsumer.TryGetHeld(string streamId, [NotNullWhen(true)] out DurableEntry? entry) => _held.TryGet(streamId, out entry);

    /// <inheritdoc/>
    void ILocalConsumer.EndedOutsideRound() => _trim.Ended();

    /// <summary>Gets how many times the store's thread has gone round its loop (an idle store sleeps; it must never spin).</summary>
    public long Turns => Volatile.Read(ref _turns);

    public void Start(IJobIntake intake)
    {
        _intake = intake;
        _thread = new Thread(Run)
        {
            IsBackground = true,
            Name = $"WorkQueue durable '{_queue}'",
        };
        _thread.Start();
    }

    /// <summary>
    /// Pauses or resumes this consumer: paused, it fetches and reclaims nothing (the queue hands back what it fetched and
    /// has not started), and its running jobs keep their claims; resumed, it fetches at once.
    /// </summary>
    public void SetPaused(bool paused)
    {
        _paused = paused;
        if (!paused)
        {
            _nudged = true;
        }

        Signal();
    }

    /// <summary>Gets a value indicating whether this consumer takes jobs: it has not stopped fetching, nor been paused.</summary>
    private bool Taking => !_fetchStopped && !_paused && _durable.Consume;

    public void StopFetching()
    {
        _fetchStopped = true;
        Signal();
    }

    public async Task StopAsync(TimeSpan timeout)
    {
        _fetchStopped = true;
        _stopRequestedAt = _time.GetTimestamp();
        _stopping = true;
        Signal();
        if (_thread is null)
        {
            return;
        }

        try
        {
            await _exited.Task.WaitAsync(timeout > StopTimeout ? timeout : StopTimeout, _time).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            // Redis did not answer in time: what was not sent stays pending in Redis and is reclaimed by another instance.
            _logger.TryLog(static (l, s) => Log.StopTimedOut(l, s._queue, s.Held), this);
        }
    }

    /// <summary>Wakes the store's thread; cheap when it is already awake (one interlocked operation).</summary>
    private void Signal()
    {
        if (Interlocked.Exchange(ref _signaled, 1) == 0)
        {
            _wake.Set();
        }
    }

    private void Run()
    {
        try
        {
            while (true)
            {
                Volatile.Write(ref _turns, _turns + 1);
                Volatile.Write(ref _lastTurnAt, Stopwatch.GetTimestamp());

                // Reset before looking at the queues: anything queued after this point signals again.
                _wake.Reset();
                Interlocked.Exchange(ref _signaled, 0);
                _backoff.PassStarted();
                if (_stopping && _time.GetElapsedTime(_stopRequestedAt) > StopTimeout)
                {
                    // Redis did not take the last outcomes in time: they stay pending there and are reclaimed elsewhere.
                    return;
                }

                TimeSpan wait = RunPass(out bool done);
                if (done)
                {
                    return;
                }

                if (_backoff.PassFailed)
                {
                    // A failing Redis gets one pass a backoff, however often producers signal (shorter while the
                    // queue's slot moves on Redis Cluster, see PassBackoff).
                    WaitOutBackoff(_backoff.AfterFailedPass(ErrorBackoff));
                }
                else
                {
                    _backoff.Succeeded();
                    if (wait > TimeSpan.Zero)
                    {
                        _wake.Wait(wait);
                    }
                }
            }
        }
        finally
        {
            FailWaitingEnqueues(new JobRejectedException(_queue, RejectionReason.QueueStopped, $"Durable queue '{_queue}' has stopped in this process."));
            _exited.TrySetResult();
        }
    }

    /// <summary>
    /// One pass: heartbeats first (they keep running jobs' claims), then retries, dead letters and hand-backs, then the
    /// round (enqueues, acknowledgements and fetching in one call). Each stage, and each part of the round, fails on its
    /// own, so a command Redis keeps refusing (out of memory, a read-only replica) cannot stop the others.
    /// </summary>
    private TimeSpan RunPass(out bool done)
    {
        done = false;
        try
        {
            var db = _db ??= Connect();
            if (!Stage(EnsureGroup, db))
            {
                return ErrorBackoff;
            }

            Stage(SubscribeIfNeeded, db);

            Stage(HeartbeatIfDue, db);
            Stage(AdoptOwnIfNeeded, db);
            Stage(ReclaimIfWaiting, db);
            bool busy = Stage(_settler.SendOutcomes, db);
            busy |= Stage(SendRound, db);
            if (_stopping)
            {
                FailWaitingForRoom();
                if (!busy && !_backoff.PassFailed && AllSent)
                {
                    Leave(db);
                    done = true;
                }

                return busy ? TimeSpan.Zero : ErrorBackoff;
            }

            TimeSpan wait = TimeSpan.Zero;
            if (!Stage(db => { wait = Housekeep(db); return true; }, db))
            {
                wait = ErrorBackoff;
            }

            if (!_backoff.PassFailed)
            {
                _lastError = null;
                _unreachable = false;
            }

            return busy ? TimeSpan.Zero : wait;
        }
        catch (Exception ex)
        {
            // A bug or an unexpected failure must neither take the process down nor end the queue: it is logged (at
            // most every 30 s) and the loop goes on after a backoff (held jobs stay pending in Redis meanwhile).
            _lastError = ex;
            _backoff.Failed(null);
            if (ShouldLogError())
            {
                _logger.TryLog(static (l, s) => Log.ThreadFailed(l, s.ex, s.Item2), (ex, _queue));
            }

            return ErrorBackoff;
        }
    }

    /// <summary>Runs one stage; a Redis failure is recorded (and fails queued enqueues when Redis is unreachable) instead of thrown.</summary>
    private bool Stage(Func<IDatabase, bool> stage, IDatabase db)
    {
        try
        {
            return stage(db);
        }
        catch (Exception ex) when (ex is RedisException or TimeoutException)
        {
            OnRedisError(ex);
            if (ex is RedisConnectionException || !db.Multiplexer.IsConnected)
            {
                // Unreachable: producers are told now (StoreUnavailable) rather than after a timeout each.
                _unreachable = true;
                FailQueuedEnqueues(ex);
            }

            return false;
        }
    }

    private void WaitOutBackoff(TimeSpan backoff)
    {
        long until = _time.GetTimestamp() + Ticks(backoff);
        long now;
        while ((now = _time.GetTimestamp()) < until && !(_stopping && _outcomes.IsEmpty))
        {
            _wake.Reset();
            _wake.Wait(_time.GetElapsedTime(now, until));
        }
    }

    /// <summary>
    /// Gets the shared connection (<c>AddRedisWarmup</c> registers it), from what the store was given: asked for at each
    /// use, never at construction, since resolving it connects and the store is created before the Redis warm-up runs.
    /// </summary>
    private IConnectionMultiplexer Multiplexer =>
        _redis() ?? throw new InvalidOperationException($"Durable queue '{_queue}' needs an IConnectionMultiplexer: call services.AddRedisWarmup(...).");

    /// <summary>Gets the database for calls made on request threads (the reading of jobs, <see cref="Jobs"/>; the recurring jobs' store).</summary>
    private IDatabase Database => Multiplexer.GetDatabase();

    private IDatabase Connect()
    {
        var multiplexer = Multiplexer;
        _logger.TryLog(static (l, s) => Log.Connected(l, s._queue, s.ConsumerName, s.Keys.Stream.ToString()), this);
        var db = multiplexer.GetDatabase();
        ReadRedisLimits(db);
        return db;
    }

    /// <summary>Subscribes to enqueue notifications and cancels by id, trying again every few seconds until it works (polling covers meanwhile).</summary>
    private bool SubscribeIfNeeded(IDatabase db)
    {
        if (_subscribed || !_durable.Consume || _time.GetTimestamp() < _nextSubscribeAttempt)
        {
            return true;
        }

        _nextSubscribeAttempt = _time.GetTimestamp() + Ticks(TimeSpan.FromSeconds(5));
        try
        {
            var subscriber = db.Multiplexer.GetSubscriber();
            subscriber.Subscribe(Keys.Nudge, (_, message) => OnNudgeMessage(message));
            subscriber.Subscribe(Keys.Cancel, (_, message) => OnCancelMessage(message));
            _subscribed = true;
        }
        catch (Exception ex) when (ex is RedisException or TimeoutException)
        {
            // The poll is the safety net: without notifications new jobs start within PollInterval instead of at once.
            var error = ExplainRefusal(ex.Message, ex, fresh: false) ?? ex;
            _logger.TryLog(static (l, s) => Log.SubscribeFailed(l, s.error, s.Item2), (error, _queue));
        }

        return true;
    }

    private bool EnsureGroup(IDatabase db)
    {
        if (_groupReady)
        {
            return true;
        }

        // With the epoch in the same step: after Redis lost its data, whichever instance makes the group again also
        // writes the new epoch, so no consumer can read the new group under the old epoch.
        Calls.CreateGroupCall.Run(db, Keys, ConsumerName);
        _groupReady = true;
        return true;
    }

    /// <summary>
    /// Creates the queue's consumer group (with its stream and epoch) unless it exists, as the store's first pass does:
    /// the Redis warm-up's step (<see cref="DurableGroupsWarmup"/>), so the group exists once the host has started.
    /// </summary>
    public Task CreateGroupAsync(IDatabase db) =>
        db.ScriptEvaluateAsync(DurableScripts.CreateGroup, [Keys.Stream, Keys.Epoch], [RedisStreamKeys.Group, ConsumerName]);

    /// <summary>A script failed because the stream or group is gone (deleted by hand, or a flushed Redis): create them again.</summary>
    private bool IsNoGroup(RedisServerException ex)
    {
        if (ex.Message.Contains("NOGROUP", StringComparison.Ordinal))
        {
            // Perhaps Redis lost its data: the next pass checks every held entry (KeepAlive) and stores lost ones again.
            _groupReady = false;
            _nextHeartbeat = 0;
            return true;
        }

        return false;
    }

    private void OnRedisError(Exception ex)
    {
        _backoff.Failed(ex is RedisException ? ex.Message : null);
        if (ex is RedisServerException server && IsNoGroup(server))
        {
            _lastError = ex;
            return;
        }

        bool log = ShouldLogError();

        // The error is published once, explained, and after it is logged: readiness reads _lastError from another
        // thread, and setting Redis's bare refusal first left it there for the explainer's round trip to Redis.
        if (ExplainRefusal(ex.Message, ex, log) is { } refused)
        {
            // An ACL refusal: readiness and the log say which commands and which rules, not Redis's bare NOPERM.
            if (log)
            {
                _logger.TryLog(static (l, s) => Log.CommandRefused(l, s.ex, s.Item2, s.Message), (ex, _queue, refused.Message));
            }

            _lastError = refused;
            return;
        }

        if (log)
        {
            _logger.TryLog(static (l, s) => Log.RedisFailed(l, s.ex, s.Item2, s.Item3), (ex, _queue, _held.Count));
        }

        _lastError = ex;
    }

    /// <summary>
    /// Turns an ACL refusal into an error that names what the connection's user may not run and the ACL to add, asking
    /// Redis which (<see cref="DurableAccess"/>, one script call) when <paramref name="fresh"/> (a refusal about to be
    /// logged) or the last answer is older than a few seconds, and saying the last answer otherwise (a refusal repeats
    /// every pass, and for every enqueue of a batch). Returns <see langword="null"/> for any other error.
    /// </summary>
    private RedisException? ExplainRefusal(string message, Exception? cause, bool fresh)
    {
        if (!DurableAccess.IsRefusal(message) || _db is not { } db)
        {
            return null;
        }

        if (fresh || _refusalExplained is null || _time.GetElapsedTime(_refusalExplainedAt) > RefusalRecheckInterval)
        {
            _refusalExplainedAt = _time.GetTimestamp();
            AccessReport report;
            try
            {
                report = DurableAccess.Check(db, Keys, _durable.KeyPrefix, _durable.Consume);
            }
            catch (Exception ex) when (ex is RedisException or TimeoutException)
            {
                report = AccessReport.Unchecked;
            }

            _refusalExplained = report.Explain(DurableAccess.UserOf(db.Multiplexer), _durable.KeyPrefix);
        }

        return new RedisException($"{_refusalExplained} (Redis: {message})", cause);
    }

    /// <summary>Errors repeat every pass while Redis is down; they are logged at most every 30 seconds.</summary>
    private bool ShouldLogError()
    {
        long now = _time.GetTimestamp();
        if (_lastErrorLoggedAt != long.MinValue && _time.GetElapsedTime(_lastErrorLoggedAt, now) < ErrorLogInterval)
        {
            return false;
        }

        _lastErrorLoggedAt = now;
        return true;
    }

    private void Leave(IDatabase db)
    {
        try
        {
            // Gone for good only when it holds nothing: Redis drops a deleted consumer's pending entries.
            Calls.RemoveConsumerIfEmptyCall.Run(db, Keys, ConsumerName);
            if (_subscribed)
            {
                db.Multiplexer.GetSubscriber().Unsubscribe(Keys.Nudge);
            }
        }
        catch (Exception ex) when (ex is RedisException or TimeoutException)
        {
            // Another instance removes the empty consumer once it has been idle long enough.
        }
    }

    private static string CreateConsumerName() =>
        string.Create(CultureInfo.InvariantCulture, $"{Environment.MachineName}:{Environment.ProcessId}:{Guid.NewGuid().ToString("N")[..8]}");

    /// <summary>The durable queue's log events; <see cref="OutcomeSettler"/> writes <c>DurableUnreadable</c> (503) through it too.</summary>
    internal static partial class Log
    {
        [LoggerMessage(500, LogLevel.Information, "Durable queue '{Queue}': consumer {Consumer} reads {Stream}.", EventName = "DurableConnected")]
        public static partial void Connected(ILogger logger, string queue, string consumer, string stream);

        [LoggerMessage(501, LogLevel.Warning, "Durable queue '{Queue}': Redis call failed ({Held} job(s) held here stay pending in Redis); retrying.", EventName = "DurableRedisFailed")]
        public static partial void RedisFailed(ILogger logger, Exception exception, string queue, int held);

        [LoggerMessage(517, LogLevel.Error, "Durable queue '{Queue}': {Refusal}", EventName = "DurableCommandRefused")]
        public static partial void CommandRefused(ILogger logger, Exception exception, string queue, string refusal);

        [LoggerMessage(502, LogLevel.Warning, "Durable queue '{Queue}': could not subscribe to enqueue notifications; new jobs start at the next poll.", EventName = "DurableSubscribeFailed")]
        public static partial void SubscribeFailed(ILogger logger, Exception exception, string queue);

        [LoggerMessage(503, LogLevel.Error, "Durable queue '{Queue}': entry {EntryId} cannot be read and was dead-lettered: {Error}", EventName = "DurableUnreadable")]
        public static partial void Unreadable(ILogger logger, string queue, string entryId, string error);

        [LoggerMessage(504, LogLevel.Warning, "Durable queue '{Queue}': {Count} job(s) held here are no longer this consumer's in Redis (another consumer reclaimed them after this one missed its heartbeats, or they were settled elsewhere); those not started are not run here.", EventName = "DurableClaimsLost")]
        public static partial void ClaimsLost(ILogger logger, string queue, int count);

        [LoggerMessage(505, LogLevel.Information, "Durable queue '{Queue}': reclaimed {Count} job(s) from consumers that stopped refreshing them.", EventName = "DurableReclaimed")]
        public static partial void Reclaimed(ILogger logger, string queue, int count);

        [LoggerMessage(506, LogLevel.Warning, "Durable queue '{Queue}': {Count} job(s) were delivered more than {MaxDeliveries} times and were dead-lettered as poison.", EventName = "DurablePoison")]
        public static partial void Poison(ILogger logger, string queue, int count, int maxDeliveries);

        [LoggerMessage(507, LogLevel.Warning, "Durable queue '{Queue}': Redis did not take the last outcomes before the stop's deadline; {Held} job(s) stay pending there and are reclaimed by another instance.", EventName = "DurableStopTimedOut")]
        public static partial void StopTimedOut(ILogger logger, string queue, int held);

        [LoggerMessage(508, LogLevel.Error, "Durable queue '{Queue}': an unexpected error on its Redis thread; it goes on after a backoff (jobs held here stay pending in Redis meanwhile).", EventName = "DurableThreadFailed")]
        public static partial void ThreadFailed(ILogger logger, Exception exception, string queue);

        [LoggerMessage(509, LogLevel.Information, "Durable queue '{Queue}': removed consumer(s) {Consumers} (idle, nothing pending).", EventName = "DurableConsumersRemoved")]
        public static partial void ConsumersRemoved(ILogger logger, string queue, string consumers);

        [LoggerMessage(511, LogLevel.Warning, "Durable queue '{Queue}': Redis lost {Count} job(s) held here (a restart without persistence, a failover to an empty replica, a flush): {Restored} not started were stored again; {Running} running here are stored again by their outcome (a success needs nothing).", EventName = "DurableJobsVanished")]
        public static partial void Vanished(ILogger logger, string queue, int count, int restored, int running);

        [LoggerMessage(523, LogLevel.Warning, "Durable queue '{Queue}': {Acknowledged} of the {Required} replica(s) asked for acknowledged a round of enqueues within {Timeout}; its jobs are stored on the primary and run, and their producers get EnqueueNotReplicatedException (logged at most every 30 s).", EventName = "DurableEnqueuesNotReplicated")]
        public static partial void NotReplicated(ILogger logger, Exception? exception, string queue, int acknowledged, int required, TimeSpan timeout);

        [LoggerMessage(514, LogLevel.Warning, "Durable queue '{Queue}': job {JobId} was asked to cancel but ignored its token: {Outcome}.", EventName = "DurableJobCancelIgnored")]
        public static partial void CancelIgnored(ILogger logger, string queue, string jobId, string outcome);

        [LoggerMessage(510, LogLevel.Information, "Durable queue '{Queue}': took back {Count} job(s) pending here whose fetch lost its reply.", EventName = "DurableAdopted")]
        public static partial void Adopted(ILogger logger, string queue, int count);
    }
}
