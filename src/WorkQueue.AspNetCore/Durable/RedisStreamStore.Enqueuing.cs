using System.Collections.Concurrent;
using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>The producer side: enqueues from any thread, sent by the store's thread in pipelined batches.</summary>
internal sealed partial class RedisStreamStore
{
    private static readonly TimeSpan MaxRoomBackoff = TimeSpan.FromMilliseconds(100);

    private readonly ConcurrentQueue<PendingEnqueue> _enqueues = new();
    private readonly List<PendingEnqueue> _waitingForRoom = [];
    private long _roomRetryAt;
    private TimeSpan _roomBackoff = TimeSpan.FromMilliseconds(2);

    /// <summary>Queues a serialized payload for the next batch; completes with the entry's id once Redis has it.</summary>
    public ValueTask<string> EnqueueAsync(string payload, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<string>(cancellationToken);
        }

        if (_stopping || _exited.Task.IsCompleted)
        {
            return ValueTask.FromException<string>(new JobRejectedException(_queue, RejectionReason.QueueStopped, $"Durable queue '{_queue}' has stopped in this process."));
        }

        var pending = new PendingEnqueue(payload, _options.EnqueueTimeout == Timeout.InfiniteTimeSpan ? long.MaxValue : _time.GetTimestamp() + (long)(_options.EnqueueTimeout.TotalSeconds * _time.TimestampFrequency), cancellationToken);
        _enqueues.Enqueue(pending);
        Signal();
        return new ValueTask<string>(pending.Task);
    }

    private bool AllSent => _enqueues.IsEmpty && _completed.IsEmpty && _outcomes.IsEmpty && _waitingForRoom.Count == 0;

    /// <summary>
    /// Takes the next batch of enqueues to send (jobs that found the queue full first, once their backoff has passed,
    /// so their order is kept); from here on they are no longer cancellable. <see langword="null"/> when there is none.
    /// </summary>
    private List<PendingEnqueue>? TakeEnqueues()
    {
        bool retryRoom = _waitingForRoom.Count > 0 && _time.GetTimestamp() >= _roomRetryAt;
        if (_enqueues.IsEmpty && !retryRoom)
        {
            return null;
        }

        var batch = new List<PendingEnqueue>(Math.Min(BatchSize, _enqueues.Count + _waitingForRoom.Count));
        if (retryRoom)
        {
            batch.AddRange(_waitingForRoom);
            _waitingForRoom.Clear();
        }

        while (batch.Count < BatchSize && _enqueues.TryDequeue(out var next))
        {
            batch.Add(next);
        }

        batch.RemoveAll(static p => !p.TryBeginSending());
        return batch.Count == 0 ? null : batch;
    }

    /// <summary>
    /// Completes the batch's enqueues with the ids Redis gave them; returns whether every one was stored (when the
    /// queue was full, the rest wait for room or are rejected, and the thread should not spin on them).
    /// </summary>
    private bool FinishEnqueues(List<PendingEnqueue> batch, RedisResult[] ids)
    {
        for (int i = 0; i < ids.Length; i++)
        {
            batch[i].Complete((string)ids[i]!);
        }

        if (ids.Length < batch.Count)
        {
            // The queue is full: the rest are rejected, or wait for room (with a growing backoff) until their timeout.
            long now = _time.GetTimestamp();
            for (int i = ids.Length; i < batch.Count; i++)
            {
                var pending = batch[i];
                if (_options.FullMode == QueueFullMode.Reject)
                {
                    pending.Fail(new JobRejectedException(_queue, RejectionReason.QueueFull, $"Durable queue '{_queue}' is full ({_options.Capacity} unfinished jobs in Redis) and its FullMode is Reject."));
                }
                else if (now >= pending.Deadline)
                {
                    pending.Fail(new JobRejectedException(_queue, RejectionReason.QueueFull, $"Durable queue '{_queue}' had no space for the job within its EnqueueTimeout ({_options.EnqueueTimeout})."));
                }
                else if (pending.TryWaitAgain())
                {
                    _waitingForRoom.Add(pending);
                }
            }

            _roomRetryAt = now + (long)(_roomBackoff.TotalSeconds * _time.TimestampFrequency);
            _roomBackoff = TimeSpan.FromTicks(Math.Min(_roomBackoff.Ticks * 2, MaxRoomBackoff.Ticks));
            return false;
        }

        _roomBackoff = TimeSpan.FromMilliseconds(2);
        return true;
    }

    /// <summary>The call that carried the batch failed: its callers are told the jobs were not accepted.</summary>
    private void FailEnqueues(List<PendingEnqueue> batch, Exception ex)
    {
        // The outcome is unknown only for a timeout after the call was sent; the caller is told it was not accepted
        // and may enqueue again (at-least-once: a retry can duplicate, never lose).
        var rejection = new JobRejectedException(_queue, RejectionReason.StoreUnavailable, $"Durable queue '{_queue}': Redis did not take the job ({ex.Message}).", ex);
        foreach (var pending in batch)
        {
            pending.Fail(rejection);
        }
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

    private void FailWaitingEnqueues(Exception error)
    {
        foreach (var pending in _waitingForRoom)
        {
            pending.Fail(error);
        }

        _waitingForRoom.Clear();
        while (_enqueues.TryDequeue(out var pending))
        {
            pending.Fail(error);
        }
    }

    /// <summary>One enqueue on its way: waiting, being sent (no longer cancellable), or cancelled by its caller.</summary>
    private sealed class PendingEnqueue
    {
        private const int Waiting = 0;
        private const int Sending = 1;
        private const int Canceled = 2;

        private readonly TaskCompletionSource<string> _result = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly CancellationTokenRegistration _registration;
        private int _state;

        public PendingEnqueue(string payload, long deadline, CancellationToken cancellationToken)
        {
            Payload = payload;
            Deadline = deadline;
            if (cancellationToken.CanBeCanceled)
            {
                _registration = cancellationToken.UnsafeRegister(static (s, token) => ((PendingEnqueue)s!).Cancel(token), this);
            }
        }

        public string Payload { get; }

        public long Deadline { get; }

        public Task<string> Task => _result.Task;

        /// <summary>From here on the job may reach Redis, so the caller's token no longer cancels it.</summary>
        public bool TryBeginSending() => Interlocked.CompareExchange(ref _state, Sending, Waiting) == Waiting;

        public bool TryWaitAgain() => Interlocked.CompareExchange(ref _state, Waiting, Sending) == Sending;

        public void Complete(string id)
        {
            _registration.Dispose();
            _result.TrySetResult(id);
        }

        public void Fail(Exception error)
        {
            _registration.Dispose();
            _result.TrySetException(error);
        }

        private void Cancel(CancellationToken token)
        {
            if (Interlocked.CompareExchange(ref _state, Canceled, Waiting) == Waiting)
            {
                _result.TrySetCanceled(token);
            }
        }
    }
}
