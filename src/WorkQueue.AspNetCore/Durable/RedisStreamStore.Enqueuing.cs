using System.Collections.Concurrent;
using System.Diagnostics;
using StackExchange.Redis;
using WorkQueue.Internal;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>The producer side: enqueues from any thread, sent by the store's thread in batches, one a turn (see <c>.Round.cs</c>).</summary>
internal sealed partial class RedisStreamStore
{
    private static readonly TimeSpan MaxRoomBackoff = TimeSpan.FromMilliseconds(100);

    /// <summary>Redis's default <c>proto-max-bulk-len</c> (512 MB): the largest argument it takes, until CONFIG GET says otherwise.</summary>
    private const long RedisDefaultMaxBulk = 512L * 1024 * 1024;

    /// <summary>Room left under Redis's argument limit for what a retry adds to a payload (job id, attempt, time).</summary>
    private const long RetryFieldsHeadroom = 1024;

    /// <summary>
    /// The most payload characters one script call carries: a batch is cut there (one larger payload travels alone), so
    /// one call never gets near Redis's limits on a request and a few large jobs do not hold its thread for long.
    /// </summary>
    internal const long BatchPayloadBudget = 16L * 1024 * 1024;

    /// <summary>What the round answers for an enqueue whose idempotency key a job still holds, before that job's id (job ids never start with it).</summary>
    internal const char DeduplicatedPrefix = '!';

    /// <summary>What the round answers for an enqueue the queue had no room for (see <see cref="DurableScripts.Round"/>).</summary>
    private const string NoRoom = "#";

    private static readonly Func<string, string> s_answerAsIs = static answer => answer;

    private long _redisMaxBulk = RedisDefaultMaxBulk;

    private long _notReplicatedLoggedAt = long.MinValue;

    private readonly ConcurrentQueue<PendingEnqueue> _enqueues = new();
    private readonly List<PendingEnqueue> _waitingForRoom = [];
    private long _roomRetryAt;
    private TimeSpan _roomBackoff = TimeSpan.FromMilliseconds(2);

    /// <summary>Queues a serialized payload for the next batch; completes with the entry's id once Redis has it.</summary>
    public ValueTask<string> EnqueueAsync(string payload, CancellationToken cancellationToken) =>
        EnqueueAsync(payload, string.Empty, cancellationToken);

    /// <summary>
    /// Queues a serialized payload for the next batch with a spec that says when or on what condition it is added (see
    /// <see cref="DurableScripts.Round"/>): completes with the job's id once Redis has it (an empty id for a recurring
    /// occurrence another instance had added).
    /// </summary>
    public ValueTask<string> EnqueueAsync(string payload, string spec, CancellationToken cancellationToken) =>
        EnqueueAsync(payload, spec, key: null, cancellationToken);

    /// <summary>
    /// Queues a serialized payload for the next batch with a spec (see <see cref="DurableScripts.Round"/>) and an
    /// idempotency key: completes with the new job's id, or with <c>!</c> and the id of the job that holds the key
    /// (<see cref="DeduplicatedPrefix"/>).
    /// </summary>
    public ValueTask<string> EnqueueAsync(string payload, string spec, string? key, CancellationToken cancellationToken) =>
        EnqueueAsync(payload, spec, key, s_answerAsIs, cancellationToken);

    /// <summary>
    /// Queues a serialized payload as <see cref="EnqueueAsync(string, string, string?, CancellationToken)"/> does, and
    /// completes with <paramref name="read"/>'s reading of Redis's answer, made on the store's thread as the task is
    /// completed: a caller that blocks on the task (legacy code on a worker) is released while the CLR thread pool is
    /// starved, where a continuation that reads the answer would wait for a pool thread.
    /// </summary>
    public ValueTask<T> EnqueueAsync<T>(string payload, string spec, string? key, Func<string, T> read, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<T>(cancellationToken);
        }

        if (TooLarge(payload) is { } tooLarge)
        {
            // Refused here, alone: sent, it would fail the whole call and every enqueue travelling with it.
            return ValueTask.FromException<T>(tooLarge);
        }

        if (_stopping || _exited.Task.IsCompleted)
        {
            return ValueTask.FromException<T>(Stopped());
        }

        if (_unreachable)
        {
            // The last call found Redis unreachable: fail now instead of after a timeout (cleared by the next success),
            // with what it failed with.
            var cause = _lastError;
            return ValueTask.FromException<T>(new JobRejectedException(_queue, RejectionReason.StoreUnavailable, $"Durable queue '{_queue}': Redis cannot be reached ({cause?.Message}).", cause));
        }

        long deadline = _options.EnqueueTimeout == Timeout.InfiniteTimeSpan ? long.MaxValue : _time.GetTimestamp() + Ticks(_options.EnqueueTimeout);
        var pending = new PendingEnqueue<T>(payload, spec, key ?? string.Empty, deadline, read, cancellationToken);
        _enqueues.Enqueue(pending);
        if (_exited.Task.IsCompleted)
        {
            // The thread ended between the check above and now: nobody else will answer it.
            FailQueued(Stopped());
        }

        Signal();
        return new ValueTask<T>(pending.Task);
    }

    /// <summary>Gets the largest payload, in bytes, this queue sends: MaxPayloadBytes, at most what Redis takes in one argument less the retry fields.</summary>
    public long MaxPayloadBytes => Math.Min(_durable.MaxPayloadBytes ?? long.MaxValue, Volatile.Read(ref _redisMaxBulk) - RetryFieldsHeadroom);

    private ArgumentException? TooLarge(string payload)
    {
        long limit = MaxPayloadBytes;

        // UTF-8 takes at most 3 bytes a UTF-16 character: most payloads need no count.
        if ((long)payload.Length * 3 <= limit)
        {
            return null;
        }

        long bytes = System.Text.Encoding.UTF8.GetByteCount(payload);
        return bytes <= limit
            ? null
            : new ArgumentException(
                $"Durable queue '{_queue}': the job's payload is {bytes} bytes of JSON, over the queue's limit of {limit} bytes " +
                "(DurableQueueOptions.MaxPayloadBytes, at most Redis's proto-max-bulk-len less 1 KB for the fields a retry adds). Store large data elsewhere and enqueue a reference to it.",
                "payload");
    }

    /// <summary>Reads Redis's argument limit (<c>proto-max-bulk-len</c>) when the connection may (admin commands); else the default stands.</summary>
    private void ReadRedisLimits(IDatabase db)
    {
        try
        {
            var reply = (RedisResult[])db.Execute("CONFIG", "GET", "proto-max-bulk-len")!;
            if (reply.Length == 2 && long.TryParse((string?)reply[1], System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out long limit) && limit > RetryFieldsHeadroom)
            {
                Volatile.Write(ref _redisMaxBulk, limit);
            }
        }
        catch (Exception ex) when (ex is RedisException or RedisCommandException or TimeoutException or InvalidCastException)
        {
            // Not allowed (no admin mode, an ACL, a managed Redis without CONFIG): Redis's default limit stands.
        }
    }

    private bool AllSent => _enqueues.IsEmpty && _outcomes.IsEmpty && _waitingForRoom.Count == 0;

    /// <summary>
    /// Completes a batch's enqueues with what Redis answered each, in order: a new id, the holder of its idempotency key,
    /// <see cref="NoRoom"/> (the queue is full), or <see cref="RoundReply.NotStoredPrefix"/> and why it was not stored
    /// (Redis refused it or an earlier write, a key of another type, a spec the script cannot read): each caller is told
    /// its own outcome. With <paramref name="replicas"/> (the round's <c>WAIT</c>) short of
    /// <see cref="DurableQueueOptions.ReplicaAcknowledgements"/>, each one Redis answered (stored, or its key's holder
    /// named) fails with <see cref="EnqueueNotReplicatedException"/> instead. Returns whether any was answered.
    /// </summary>
    private bool FinishEnqueues(List<PendingEnqueue> batch, RedisResult[] answers, ReplicaAcknowledgement? replicas)
    {
        bool replicated = replicas is not { } acknowledged || (acknowledged.Error is null && acknowledged.Count >= _durable.ReplicaAcknowledgements);
        Debug.Assert(answers.Length == batch.Count, "The round answers every enqueue.");
        List<PendingEnqueue>? full = null;
        int answered = 0;
        for (int i = 0; i < batch.Count; i++)
        {
            string? id = i < answers.Length ? (string?)answers[i] : null;
            if (id is null)
            {
                // Never so (the script answers each one): if it were, whether it was stored is not known.
                batch[i].Fail(OutcomeUnknown(new RedisException("The round did not answer this enqueue.")));
            }
            else if (id == NoRoom)
            {
                (full ??= []).Add(batch[i]);
            }
            else if (id.Length > 0 && id[0] == RoundReply.NotStoredPrefix)
            {
                string why = id[1..];
                batch[i].Fail(new JobRejectedException(_queue, RejectionReason.StoreUnavailable, $"Durable queue '{_queue}': Redis did not take the job ({ExplainRefusal(why, null, fresh: false)?.Message ?? why})."));
            }
            else if (!replicated)
            {
                batch[i].Fail(NotReplicated(id, replicas!.Value));
                answered++;
            }
            else
            {
                batch[i].Complete(id);
                answered++;
            }
        }

        if (!replicated && answered > 0)
        {
            // Only when Redis stored some: a round it refused whole (READONLY from a demoted primary, OOM) stored nothing
            // on the primary, and its producers were told so.
            LogNotReplicated(replicas!.Value);
        }

        if (full is null)
        {
            _roomBackoff = TimeSpan.FromMilliseconds(2);
            return answered > 0;
        }

        // The queue is full: the rest are rejected, or wait for room (with a growing backoff) until their timeout,
        // ahead of anything enqueued after them.
        long now = _time.GetTimestamp();
        var stillWaiting = new List<PendingEnqueue>(full.Count);
        foreach (var pending in full)
        {
            if (_options.FullMode == QueueFullMode.Reject)
            {
                pending.Fail(new JobRejectedException(_queue, RejectionReason.QueueFull, $"Durable queue '{_queue}' is full ({_options.Capacity} unfinished jobs in Redis) and its FullMode is Reject."));
            }
            else if (now >= pending.Deadline)
            {
                pending.Fail(TimedOut());
            }
            else if (pending.TryWaitAgain())
            {
                stillWaiting.Add(pending);
            }
        }

        _waitingForRoom.InsertRange(0, stillWaiting);
        _roomRetryAt = now + Ticks(_roomBackoff);
        _roomBackoff = TimeSpan.FromTicks(Math.Min(_roomBackoff.Ticks * 2, MaxRoomBackoff.Ticks));
        return answered > 0;
    }

    /// <summary>
    /// The call that carried the batch failed as a whole: each of its callers is told that the job was not stored when
    /// that is known (Redis answered with an error: the round fails as a whole only before its first write; or the call
    /// was never sent), else that the outcome is unknown (<see cref="EnqueueOutcomeUnknownException"/>).
    /// </summary>
    private void FailEnqueues(List<PendingEnqueue> batch, Exception ex)
    {
        Exception error = SentWithoutAnswer(ex)
            ? OutcomeUnknown(ex)
            : new JobRejectedException(_queue, RejectionReason.StoreUnavailable, $"Durable queue '{_queue}': Redis did not take the job ({ExplainRefusal(ex.Message, ex, fresh: false)?.Message ?? ex.Message}).", ex);
        foreach (var pending in batch)
        {
            pending.Fail(error);
        }
    }

    /// <summary>
    /// Whether a call that failed with <paramref name="ex"/> may have run in Redis: it was sent and no answer came (a
    /// timeout, a connection dropped). An error Redis answered, or a call still waiting to be sent, did not run.
    /// </summary>
    private static bool SentWithoutAnswer(Exception ex) => ex switch
    {
        RedisServerException => false,
        RedisTimeoutException timeout => timeout.Commandstatus is not (CommandStatus.WaitingToBeSent or CommandStatus.WaitingInBacklog),
        RedisConnectionException connection => connection.CommandStatus is not (CommandStatus.WaitingToBeSent or CommandStatus.WaitingInBacklog),
        _ => true,
    };

    /// <summary>
    /// A stored enqueue (or a keyed one answered with its key's holder) whose round fewer replicas acknowledged than
    /// asked: the job is on the primary and runs; a failover to a replica that lacks it would lose it.
    /// </summary>
    private EnqueueNotReplicatedException NotReplicated(string answer, ReplicaAcknowledgement replicas)
    {
        string jobId = answer.Length > 0 && answer[0] == DeduplicatedPrefix ? answer[1..] : answer;
        string why = replicas.Error is { } error
            ? $"the replicas' acknowledgement was not read ({error.Message})"
            : $"{replicas.Count} of the {_durable.ReplicaAcknowledgements} replica(s) asked for (DurableQueueOptions.ReplicaAcknowledgements) confirmed having it within ReplicaAcknowledgementTimeout ({_durable.ReplicaAcknowledgementTimeout})";
        return new EnqueueNotReplicatedException(
            _queue,
            jobId,
            _durable.ReplicaAcknowledgements,
            replicas.Count,
            $"Durable queue '{_queue}': job {jobId} is stored on the Redis primary and runs, but {why}: a failover to a replica that lacks it would lose it. " +
            "Enqueuing it again stores it twice, unless it has an idempotency key.",
            replicas.Error);
    }

    private void LogNotReplicated(ReplicaAcknowledgement replicas)
    {
        // Every round of enqueues fails so while replicas do not answer: once every 30 s is enough to be seen.
        long now = _time.GetTimestamp();
        if (_notReplicatedLoggedAt != long.MinValue && _time.GetElapsedTime(_notReplicatedLoggedAt, now) < ErrorLogInterval)
        {
            return;
        }

        _notReplicatedLoggedAt = now;
        _logger.TryLog(
            static (l, s) => Log.NotReplicated(l, s.replicas.Error, s._queue, s.replicas.Count, s._durable.ReplicaAcknowledgements, s._durable.ReplicaAcknowledgementTimeout),
            (replicas, _queue, _durable));
    }

    private EnqueueOutcomeUnknownException OutcomeUnknown(Exception ex) =>
        new(_queue, $"Durable queue '{_queue}': Redis did not answer, so the job may or may not have been stored ({ex.Message}). Enqueuing it again may store it twice, unless it has an idempotency key.", ex);

    /// <summary>
    /// Takes the next batch: while jobs wait for room, new ones queue behind them (first come, first stored) and
    /// nothing is sent before the backoff has passed; jobs past their deadline or cancelled leave the line.
    /// </summary>
    private List<PendingEnqueue>? TakeBatch()
    {
        List<PendingEnqueue> batch;
        if (_waitingForRoom.Count > 0)
        {
            while (_enqueues.TryDequeue(out var next))
            {
                _waitingForRoom.Add(next);
            }

            long now = _time.GetTimestamp();
            _waitingForRoom.RemoveAll(p =>
            {
                if (p.IsCanceled)
                {
                    return true;
                }

                if (now >= p.Deadline)
                {
                    p.Fail(TimedOut());
                    return true;
                }

                return false;
            });
            if (_waitingForRoom.Count == 0 || now < _roomRetryAt)
            {
                return null;
            }

            int take = 0;
            long size = 0;
            while (take < Math.Min(BatchSize, _waitingForRoom.Count) && (take == 0 || size + _waitingForRoom[take].Payload.Length <= BatchPayloadBudget))
            {
                size += _waitingForRoom[take++].Payload.Length;
            }

            batch = _waitingForRoom.GetRange(0, take);
            _waitingForRoom.RemoveRange(0, take);
        }
        else
        {
            if (_enqueues.IsEmpty)
            {
                return null;
            }

            batch = new List<PendingEnqueue>(Math.Min(BatchSize, _enqueues.Count));
            long size = 0;
            while (batch.Count < BatchSize
                && _enqueues.TryPeek(out var next)
                && (batch.Count == 0 || size + next.Payload.Length <= BatchPayloadBudget)
                && _enqueues.TryDequeue(out next))
            {
                // One reader (this thread): the entry peeked is the one dequeued.
                size += next.Payload.Length;
                batch.Add(next);
            }
        }

        batch.RemoveAll(static p => !p.TryBeginSending());
        return batch.Count == 0 ? null : batch;
    }

    /// <summary>The time until jobs waiting for room should try again, if any wait.</summary>
    private TimeSpan? RoomRetryIn()
    {
        if (_waitingForRoom.Count == 0)
        {
            return null;
        }

        long now = _time.GetTimestamp();
        return now >= _roomRetryAt ? TimeSpan.Zero : _time.GetElapsedTime(now, _roomRetryAt);
    }

    /// <summary>Redis is unreachable: every enqueue not yet sent is told so now.</summary>
    private void FailQueuedEnqueues(Exception cause)
    {
        var rejection = new JobRejectedException(_queue, RejectionReason.StoreUnavailable, $"Durable queue '{_queue}': Redis cannot be reached ({cause.Message}).", cause);
        FailWaitingEnqueues(rejection);
    }

    /// <summary>A stopping queue no longer waits for room: those jobs were never stored, and their callers are told.</summary>
    private void FailWaitingForRoom() => FailWaitingForRoom(Stopped());

    /// <summary>On the store's thread (or once it has ended): fails every enqueue not yet sent.</summary>
    private void FailWaitingEnqueues(Exception error)
    {
        FailWaitingForRoom(error);
        FailQueued(error);
    }

    /// <summary>Fails what is in the producers' queue; safe from any thread.</summary>
    private void FailQueued(Exception error)
    {
        while (_enqueues.TryDequeue(out var pending))
        {
            pending.Fail(error);
        }
    }

    private void FailWaitingForRoom(Exception error)
    {
        foreach (var pending in _waitingForRoom)
        {
            pending.Fail(error);
        }

        _waitingForRoom.Clear();
    }

    private JobRejectedException Stopped() =>
        new(_queue, RejectionReason.QueueStopped, $"Durable queue '{_queue}' has stopped in this process.");

    private JobRejectedException TimedOut() =>
        new(_queue, RejectionReason.QueueFull, $"Durable queue '{_queue}' had no space for the job within its EnqueueTimeout ({_options.EnqueueTimeout}).");

    /// <summary>One enqueue on its way: waiting, being sent (no longer cancellable), or cancelled by its caller.</summary>
    private abstract class PendingEnqueue
    {
        private const int Waiting = 0;
        private const int Sending = 1;
        private const int Canceled = 2;

        private readonly CancellationTokenRegistration _registration;
        private readonly CancellationToken _cancellationToken;
        private int _state;

        protected PendingEnqueue(string payload, string spec, string key, long deadline, CancellationToken cancellationToken)
        {
            Payload = payload;
            Spec = spec;
            Key = key;
            Deadline = deadline;
            _cancellationToken = cancellationToken;
            if (cancellationToken.CanBeCanceled)
            {
                _registration = cancellationToken.UnsafeRegister(static (s, token) => ((PendingEnqueue)s!).Cancel(token), this);
            }
        }

        public string Payload { get; }

        /// <summary>Gets when or on what condition the job is added: empty for now (see <see cref="DurableScripts.Round"/>).</summary>
        public string Spec { get; }

        /// <summary>Gets the idempotency key, or an empty string for none.</summary>
        public string Key { get; }

        public long Deadline { get; }

        public bool IsCanceled => Volatile.Read(ref _state) == Canceled;

        /// <summary>From here on the job may reach Redis, so the caller's token no longer cancels it.</summary>
        public bool TryBeginSending() => Interlocked.CompareExchange(ref _state, Sending, Waiting) == Waiting;

        /// <summary>Back to waiting for room; a cancellation that came while it was being sent takes effect now.</summary>
        public bool TryWaitAgain()
        {
            if (Interlocked.CompareExchange(ref _state, Waiting, Sending) != Sending)
            {
                return false;
            }

            if (_cancellationToken.IsCancellationRequested)
            {
                Cancel(_cancellationToken);
                return false;
            }

            return true;
        }

        /// <summary>Completes the caller's task with Redis's answer for the job (its id, or <c>!</c> and the key holder's).</summary>
        public void Complete(string answer)
        {
            _registration.Dispose();
            SetResult(answer);
        }

        public void Fail(Exception error)
        {
            _registration.Dispose();
            SetException(error);
        }

        protected abstract void SetResult(string answer);

        protected abstract void SetException(Exception error);

        protected abstract void SetCanceled(CancellationToken token);

        private void Cancel(CancellationToken token)
        {
            if (Interlocked.CompareExchange(ref _state, Canceled, Waiting) == Waiting)
            {
                SetCanceled(token);
            }
        }
    }

    /// <summary>An enqueue whose caller gets <typeparamref name="T"/>, read from Redis's answer as the task completes.</summary>
    private sealed class PendingEnqueue<T>(string payload, string spec, string key, long deadline, Func<string, T> read, CancellationToken cancellationToken)
        : PendingEnqueue(payload, spec, key, deadline, cancellationToken)
    {
        private readonly TaskCompletionSource<T> _result = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public Task<T> Task => _result.Task;

        protected override void SetResult(string answer)
        {
            T value;
            try
            {
                value = read(answer);
            }
            catch (Exception ex)
            {
                // Never expected (the readers are ours), but the store's thread must go on and the caller must hear.
                _result.TrySetException(ex);
                return;
            }

            _result.TrySetResult(value);
        }

        protected override void SetException(Exception error) => _result.TrySetException(error);

        protected override void SetCanceled(CancellationToken token) => _result.TrySetCanceled(token);
    }
}
