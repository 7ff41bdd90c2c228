using System.Diagnostics;
using WorkQueue.Accounting;

namespace WorkQueue.Queueing;

/// <summary>
/// Stops a set of queues together. They refuse work from outside jobs at once and keep accepting what running jobs
/// enqueue, so accepted work flows on through queues that feed each other; they stop when no job is queued, running or
/// waiting to retry in any of them (one count across the set: a job enqueued by a running job is counted before its
/// parent ends, so zero is a sound point to stop), or at the deadline, which wins for queues that feed each other in a
/// cycle. Then what is left is cancelled and reported.
/// </summary>
internal sealed class ShutdownGroup : IDrainListener
{
    private readonly QueueRuntime[] _queues;
    private readonly TimeProvider _time;
    private readonly TaskCompletionSource _drained = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _signaled;

    public ShutdownGroup(QueueRuntime[] queues, TimeProvider time)
    {
        _queues = queues;
        _time = time;
    }

    public void OnJobEnded() => CheckDrained();

    public async Task<ShutdownReport[]> RunAsync(TimeSpan drainTimeout, CancellationToken cancellationToken)
    {
        long started = _time.GetTimestamp();
        foreach (var queue in _queues)
        {
            queue.BeginDraining(this);
        }

        // Pairs with the attempt counted before the admission is read on the enqueue path: either the enqueue sees the
        // queue draining, or this check sees its attempt as unfinished.
        Interlocked.MemoryBarrier();
        CheckDrained();

        bool drained = await QueueRuntime.WaitAsync(_drained.Task, drainTimeout, _time, cancellationToken).ConfigureAwait(false);
        if (!drained)
        {
            foreach (var queue in _queues)
            {
                queue.Abandon();
            }

            CheckDrained();
            var grace = _queues.Max(q => q.Options.ShutdownGracePeriod);
            if (!await QueueRuntime.WaitAsync(_drained.Task, grace, _time, CancellationToken.None).ConfigureAwait(false))
            {
                foreach (var queue in _queues)
                {
                    queue.ReportStillRunning();
                }
            }
        }

        var elapsed = _time.GetElapsedTime(started);
        return await Task.WhenAll(_queues.Select(q => q.FinishStopAsync(drained, elapsed))).ConfigureAwait(false);
    }

    private void CheckDrained()
    {
        if (Volatile.Read(ref _signaled) != 0)
        {
            return;
        }

        // Every queue's ended counters first, then every queue's accepted counters (see JobLedger.ReadEnded).
        long ended = 0;
        foreach (var queue in _queues)
        {
            ended += queue.Ledger.ReadEnded();
        }

        long accepted = 0;
        foreach (var queue in _queues)
        {
            accepted += queue.Ledger.ReadAccepted();
        }

        Debug.Assert(accepted >= ended, "A job cannot end before it was accepted.");
        if (accepted != ended || Interlocked.Exchange(ref _signaled, 1) != 0)
        {
            return;
        }

        foreach (var queue in _queues)
        {
            queue.CloseDrained();
        }

        _drained.TrySetResult();
    }
}
