using System.Collections.Concurrent;
using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using StackExchange.Redis;
using WorkQueue.Durability;
using WorkQueue.Internal;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// One durable queue's link to Redis Streams: the store its jobs come from and go back to. Every Redis call it makes
/// runs on one dedicated thread, synchronously (with StackExchange.Redis's dedicated I/O threads, a reply does not need
/// the CLR thread pool), so a starved pool cannot stop fetching, acknowledging or enqueuing. Other threads only queue
/// work for it and signal it: enqueues, which it sends in batches; outcomes, which it settles in batches; a
/// notification that another instance enqueued. Each turn of its loop sends the next batch of acknowledgements, the
/// next batch of enqueues and, when due, a fetch in one script call: one round trip.
/// </summary>
/// <remarks>
/// This file holds the thread's loop; <c>.Enqueuing.cs</c> the producer side; <c>.Fetching.cs</c> fetching, heartbeats,
/// reclaiming and statistics; <c>.Settling.cs</c> how outcomes are written back.
/// </remarks>
internal sealed partial class RedisStreamStore : IJobStore
{
    /// <summary>The most entries one script call carries (Lua's unpack limit is far above it; round trips stay short).</summary>
    private const int BatchSize = 256;

    private static readonly TimeSpan ErrorBackoff = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan StatsMaxAge = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan StatsInterest = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan ErrorLogInterval = TimeSpan.FromSeconds(30);

    private readonly string _queue;
    private readonly WorkQueueOptions _options;
    private readonly DurableQueueOptions _durable;
    private readonly DurableJobType _jobType;
    private readonly IServiceProvider _services;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly ManualResetEventSlim _wake = new(false);
    private readonly TaskCompletionSource _exited = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly ConcurrentDictionary<string, DurableEntry> _held = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, byte> _lost = new(StringComparer.Ordinal);
    private IJobIntake? _intake;
    private IDatabase? _db;
    private Thread? _thread;
    private int _signaled;
    private volatile bool _fetchStopped;
    private volatile bool _stopping;
    private volatile bool _groupReady;
    private volatile string? _lastError;
    private long _lastErrorLoggedAt = long.MinValue;
    private long _stopRequestedAt;

    public RedisStreamStore(
        string queue,
        WorkQueueOptions options,
        DurableQueueOptions durable,
        DurableJobType jobType,
        IServiceProvider services,
        TimeProvider time,
        ILogger logger)
    {
        _queue = queue;
        _options = options;
        _durable = durable;
        _jobType = jobType;
        _services = services;
        _time = time;
        _logger = logger;
        Keys = new RedisStreamKeys(durable.KeyPrefix, queue);
        ConsumerName = CreateConsumerName();
    }

    public string QueueName => _queue;

    public RedisStreamKeys Keys { get; }

    /// <summary>Gets this process's consumer name in the queue's group: host, process id and a random suffix, new per start.</summary>
    public string ConsumerName { get; }

    public DurableJobType JobType => _jobType;

    public int PrefetchCapacity => _durable.Prefetch;

    /// <summary>Gets a value indicating whether the last Redis call succeeded (readiness).</summary>
    public bool IsConnected => _lastError is null && _groupReady;

    /// <summary>Gets the last Redis error, or <see langword="null"/> when the last call succeeded.</summary>
    public string? LastError => _lastError;

    /// <summary>Gets the number of entries this process holds: fetched and not yet settled.</summary>
    public int Held => _held.Count;

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
            await _exited.Task.WaitAsync(timeout, _time).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            // Redis did not answer in time: what was not sent stays pending in Redis and is reclaimed by another instance.
            TryLog(static (l, s) => Log.StopTimedOut(l, s._queue, s.Held), this);
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
                // Reset before looking at the queues: anything queued after this point signals again.
                _wake.Reset();
                Interlocked.Exchange(ref _signaled, 0);

                TimeSpan wait;
                try
                {
                    var db = _db ??= Connect();
                    EnsureGroup(db);
                    bool busy = SendRound(db);
                    busy |= SendOutcomes(db);
                    if (_stopping)
                    {
                        if (!busy && AllSent)
                        {
                            Leave(db);
                            return;
                        }

                        continue;
                    }

                    wait = Housekeep(db);
                    if (busy)
                    {
                        wait = TimeSpan.Zero;
                    }

                    _lastError = null;
                }
                catch (Exception ex) when (IsRedisFailure(ex))
                {
                    OnRedisError(ex);
                    if (_stopping && _time.GetElapsedTime(_stopRequestedAt) > _options.ShutdownGracePeriod)
                    {
                        return;
                    }

                    wait = ErrorBackoff;
                }

                if (wait > TimeSpan.Zero)
                {
                    _wake.Wait(wait);
                }
            }
        }
        catch (Exception ex)
        {
            // A bug here must not take the process down; held jobs stay pending in Redis and are reclaimed elsewhere.
            TryLog(static (l, s) => Log.ThreadFailed(l, s.ex, s.Item2), (ex, _queue));
        }
        finally
        {
            FailWaitingEnqueues(new JobRejectedException(_queue, RejectionReason.QueueStopped, $"Durable queue '{_queue}' has stopped in this process."));
            _exited.TrySetResult();
        }
    }

    /// <summary>
    /// Sends the next batch of acknowledgements, the next batch of enqueues and, when due, a fetch, in one script call
    /// (<see cref="DurableScripts.Round"/>): one round trip, and under <c>appendfsync always</c> one fsync, where three
    /// calls would wait for three. Returns whether it sent acknowledgements or enqueues (there may be more).
    /// </summary>
    private bool SendRound(IDatabase db)
    {
        var enqueues = TakeEnqueues();
        var completed = TakeCompleted();
        int room = FetchRoom(enqueuing: enqueues is not null);
        if (enqueues is null && completed is null && room == 0)
        {
            return false;
        }

        int count = enqueues?.Count ?? 0;
        var args = new RedisValue[7 + count + (completed?.Count ?? 0)];
        args[0] = _options.Capacity;
        args[1] = Keys.NudgeName;
        args[2] = RedisStreamKeys.Group;
        args[3] = ConsumerName;
        args[4] = room;
        args[5] = PromoteLimit;
        args[6] = count;
        for (int i = 0; i < count; i++)
        {
            args[7 + i] = enqueues![i].Payload;
        }

        completed?.CopyTo(args, 7 + count);
        long sentAt = _time.GetTimestamp();
        RedisResult[] result;
        try
        {
            result = (RedisResult[])db.ScriptEvaluate(DurableScripts.Round, [Keys.Stream, Keys.Delayed], args)!;
        }
        catch (Exception ex) when (IsRedisFailure(ex))
        {
            if (enqueues is not null)
            {
                FailEnqueues(enqueues, ex);
            }

            if (completed is not null)
            {
                PutBackCompleted(completed);
            }

            throw;
        }

        bool sent = false;
        if (completed is not null)
        {
            ForgetCompleted(completed);
            sent = true;
        }

        if (enqueues is not null)
        {
            sent |= FinishEnqueues(enqueues, (RedisResult[])result[0]!);
        }

        if (room > 0)
        {
            FinishFetch(db, room, sentAt, result[1], result[2], result[3]);
        }

        return sent;
    }

    /// <summary>A failure the loop recovers from by backing off and trying again (Redis unreachable, slow, or refusing).</summary>
    private static bool IsRedisFailure(Exception ex) => ex is RedisException or TimeoutException or InvalidOperationException;

    private IDatabase Connect()
    {
        var multiplexer = _services.GetService<IConnectionMultiplexer>()
            ?? throw new InvalidOperationException($"Durable queue '{_queue}' needs an IConnectionMultiplexer: call services.AddRedisWarmup(...).");
        var db = multiplexer.GetDatabase();
        try
        {
            multiplexer.GetSubscriber().Subscribe(Keys.Nudge, (_, _) => OnNudged());
        }
        catch (RedisException ex)
        {
            // The poll is the safety net: without notifications new jobs start within PollInterval instead of at once.
            TryLog(static (l, s) => Log.SubscribeFailed(l, s.ex, s.Item2), (ex, _queue));
        }

        TryLog(static (l, s) => Log.Connected(l, s._queue, s.ConsumerName, s.Keys.Stream.ToString()), this);
        return db;
    }

    private void EnsureGroup(IDatabase db)
    {
        if (_groupReady)
        {
            return;
        }

        try
        {
            // From the start of the stream, so jobs enqueued before any consumer existed are delivered too.
            db.StreamCreateConsumerGroup(Keys.Stream, RedisStreamKeys.Group, StreamPosition.Beginning, createStream: true);
        }
        catch (RedisServerException ex) when (ex.Message.Contains("BUSYGROUP", StringComparison.Ordinal))
        {
            // Another instance (or an earlier start) created it.
        }

        _groupReady = true;
    }

    /// <summary>A script failed because the stream or group is gone (deleted by hand, or a flushed Redis): create them again.</summary>
    private bool IsNoGroup(RedisServerException ex)
    {
        if (ex.Message.Contains("NOGROUP", StringComparison.Ordinal))
        {
            _groupReady = false;
            return true;
        }

        return false;
    }

    private void OnRedisError(Exception ex)
    {
        _lastError = ex.Message;
        if (ex is RedisServerException server && IsNoGroup(server))
        {
            return;
        }

        long now = _time.GetTimestamp();
        if (_lastErrorLoggedAt == long.MinValue || _time.GetElapsedTime(_lastErrorLoggedAt, now) >= ErrorLogInterval)
        {
            _lastErrorLoggedAt = now;
            TryLog(static (l, s) => Log.RedisFailed(l, s.ex, s.Item2, s.Item3), (ex, _queue, _held.Count));
        }
    }

    private void Leave(IDatabase db)
    {
        try
        {
            // Gone for good only when it holds nothing: Redis drops a deleted consumer's pending entries.
            db.ScriptEvaluate(DurableScripts.RemoveConsumerIfEmpty, [Keys.Stream], [RedisStreamKeys.Group, ConsumerName]);
            db.Multiplexer.GetSubscriber().Unsubscribe(Keys.Nudge);
        }
        catch (Exception ex) when (ex is RedisException or TimeoutException)
        {
            // Another instance removes the empty consumer once it has been idle long enough.
        }
    }

    private static string CreateConsumerName() =>
        string.Create(CultureInfo.InvariantCulture, $"{Environment.MachineName}:{Environment.ProcessId}:{Guid.NewGuid().ToString("N")[..8]}");

    private void TryLog<TState>(Action<ILogger, TState> log, TState state)
    {
        try
        {
            log(_logger, state);
        }
        catch (Exception)
        {
            // The logger is what failed; there is nowhere left to report it.
        }
    }

    private static partial class Log
    {
        [LoggerMessage(500, LogLevel.Information, "Durable queue '{Queue}': consumer {Consumer} reads {Stream}.", EventName = "DurableConnected")]
        public static partial void Connected(ILogger logger, string queue, string consumer, string stream);

        [LoggerMessage(501, LogLevel.Warning, "Durable queue '{Queue}': Redis call failed ({Held} job(s) held here stay pending in Redis); retrying.", EventName = "DurableRedisFailed")]
        public static partial void RedisFailed(ILogger logger, Exception exception, string queue, int held);

        [LoggerMessage(502, LogLevel.Warning, "Durable queue '{Queue}': could not subscribe to enqueue notifications; new jobs start at the next poll.", EventName = "DurableSubscribeFailed")]
        public static partial void SubscribeFailed(ILogger logger, Exception exception, string queue);

        [LoggerMessage(503, LogLevel.Error, "Durable queue '{Queue}': entry {EntryId} cannot be read and was dead-lettered: {Error}", EventName = "DurableUnreadable")]
        public static partial void Unreadable(ILogger logger, string queue, string entryId, string error);

        [LoggerMessage(504, LogLevel.Warning, "Durable queue '{Queue}': {Count} job(s) held here were reclaimed by another consumer (this one missed its heartbeats); they run there.", EventName = "DurableClaimsLost")]
        public static partial void ClaimsLost(ILogger logger, string queue, int count);

        [LoggerMessage(505, LogLevel.Information, "Durable queue '{Queue}': reclaimed {Count} job(s) from consumers that stopped refreshing them.", EventName = "DurableReclaimed")]
        public static partial void Reclaimed(ILogger logger, string queue, int count);

        [LoggerMessage(506, LogLevel.Warning, "Durable queue '{Queue}': {Count} job(s) were delivered more than {MaxDeliveries} times and were dead-lettered as poison.", EventName = "DurablePoison")]
        public static partial void Poison(ILogger logger, string queue, int count, int maxDeliveries);

        [LoggerMessage(507, LogLevel.Warning, "Durable queue '{Queue}': Redis did not take the last outcomes before the stop's deadline; {Held} job(s) stay pending there and are reclaimed by another instance.", EventName = "DurableStopTimedOut")]
        public static partial void StopTimedOut(ILogger logger, string queue, int held);

        [LoggerMessage(508, LogLevel.Critical, "Durable queue '{Queue}': its Redis thread failed; jobs held here stay pending in Redis and are reclaimed by another instance.", EventName = "DurableThreadFailed")]
        public static partial void ThreadFailed(ILogger logger, Exception exception, string queue);

        [LoggerMessage(509, LogLevel.Information, "Durable queue '{Queue}': removed consumer(s) {Consumers} (idle, nothing pending).", EventName = "DurableConsumersRemoved")]
        public static partial void ConsumersRemoved(ILogger logger, string queue, string consumers);
    }
}
