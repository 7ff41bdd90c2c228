using System.Collections.Concurrent;
using System.Runtime.ExceptionServices;
using WorkQueue.Internal;

namespace WorkQueue.Workers;

internal sealed partial class WorkerPool
{
    private static readonly SendOrPostCallback s_complete = static s => ((JobRun)s!).Pool.Complete((JobRun)s!);

    private readonly ConcurrentQueue<Continuation> _ready = new();
    private readonly ConcurrentQueue<WorkItem> _retries = new();
    private readonly object _yieldedLock = new();
    private JobRun? _yieldedHead;
    private int _running;
    private long _continuationsRun;
    private volatile bool _shut;

    /// <summary>Gets the number of jobs started and not yet ended, yielded async jobs included.</summary>
    public int RunningJobs => Volatile.Read(ref _running);

    /// <summary>Gets the most jobs that may run at once now.</summary>
    public int MaxConcurrencyNow => _settings.MaxConcurrency ?? Math.Max(1, LiveCount);

    public int WaitingContinuations => _ready.Count;

    /// <summary>Gets a value indicating whether a new job could start now (not paused, under the concurrency limit).</summary>
    public bool CanStartJobs => !_paused && Volatile.Read(ref _running) < MaxConcurrencyNow;

    /// <summary>Gets a value indicating whether a thread has work it could take without the channel.</summary>
    public bool HasReadyWork => !_ready.IsEmpty || (!_retries.IsEmpty && CanStartJobs);

    public bool ShouldExit =>
        _shut || (_closed && Reader.Completion.IsCompleted && Volatile.Read(ref _running) == 0 && _ready.IsEmpty && _retries.IsEmpty);

    public bool LeaderShouldStandDown => !CanStartJobs || HasReadyWork || _closed || LiveCount > EffectiveTarget;

    /// <summary>Queues a continuation of a running job for any of the pool's threads.</summary>
    public void Post(JobRun owner, SendOrPostCallback callback, object? state)
    {
        if (_shut)
        {
            // The pool is gone; a job that left work behind still gets it run.
            ThreadPool.UnsafeQueueUserWorkItem(static s => s.Callback(s.State), (Callback: callback, State: state), preferLocal: false);
            return;
        }

        _ready.Enqueue(new Continuation(callback, state, owner));
        if (_shut)
        {
            // Shut while this was being queued: hand it (and whatever else is left) to the thread pool.
            DrainReadyToThreadPool();
            return;
        }

        _parking.WakeOne();
        ArmMonitor();
    }

    /// <summary>
    /// Called after a job was written to the channel (by a producer or the durable intake). A leader waiting on the
    /// channel is woken by the write itself; with nobody leading (the leader took the previous job and runs it), the
    /// writer wakes the most recently parked follower, so the job never waits for a running one to end. Not while a
    /// thread spins for work: it takes the job, or parks and leads (its wait then finds the job), and after taking any
    /// job it looks for one left behind.
    /// </summary>
    public void OnJobWritten()
    {
        // Dekker with the resigning leader and the spinner: the write is published before the reads below, and they
        // write (resign, end of spin) before they read the channel, so one side sees the other.
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _spinning) == 0 && CanStartJobs)
        {
            _parking.WakeFollowerIfLeaderless();
        }

        OnWorkArrived();
    }

    /// <summary>
    /// Hands the threads a job whose time has come, a retry whose delay passed or a scheduled job that came due: ahead
    /// of the channel, whatever its full mode, since it was accepted already.
    /// </summary>
    public void EnqueueDue(in WorkItem item)
    {
        _retries.Enqueue(item);
        _parking.WakeOne();
        OnWorkArrived();
    }

    /// <summary>Takes every due job (retry or scheduled) that has not started, for the shutdown report.</summary>
    public List<WorkItem> TakeQueuedDue()
    {
        var items = new List<WorkItem>();
        while (_retries.TryDequeue(out var item))
        {
            items.Add(item);
        }

        return items;
    }

    /// <summary>Called after the final report: threads exit, later continuations go to the thread pool.</summary>
    public void Shut()
    {
        _shut = true;
        Close();

        // Continuations still waiting belong to jobs the shutdown gave up on; run them anyway, so a job blocked on one
        // can still return and its thread end.
        DrainReadyToThreadPool();
    }

    private void DrainReadyToThreadPool()
    {
        while (_ready.TryDequeue(out var continuation))
        {
            ThreadPool.UnsafeQueueUserWorkItem(static s => s.Owner.RunOnThreadPool(s.Callback, s.State), continuation, preferLocal: false);
        }
    }

    public void CancelRunningJobs()
    {
        foreach (var run in RunningRuns())
        {
            run.CancelForShutdown();
        }
    }

    /// <summary>Takes every still-running job away from the pool, for the shutdown report.</summary>
    public List<WorkItem> ClaimStillRunning()
    {
        var claimed = new List<WorkItem>();
        foreach (var run in RunningRuns())
        {
            if (run.TryClaimStillRunning(out var item))
            {
                claimed.Add(item);
            }
        }

        return claimed;
    }

    internal ParkRole Park(WorkerThread thread) => _parking.Park(thread);

    /// <summary>Gets a value indicating whether a thread may wait on the channel for the next job now.</summary>
    private bool MayLead => CanStartJobs && !_closed && !Reader.Completion.IsCompleted && LiveCount <= EffectiveTarget;

    internal void Unpark(WorkerThread thread) => _parking.Unpark(thread);

    /// <param name="thread">The leader.</param>
    /// <param name="woken">
    /// Whether the channel woke it (a job, or the channel completing). Then it takes the job itself and hands nothing
    /// off, unless ready work (a continuation, a due retry) will keep it busy first; a leader that stood down hands the
    /// lead on while jobs may start.
    /// </param>
    internal void Resign(WorkerThread thread, bool woken) =>
        _parking.Resign(thread, handOff: CanStartJobs && (!woken || HasReadyWork));

    internal bool TryRunContinuation(WorkerThread thread)
    {
        if (!_ready.TryDequeue(out var continuation))
        {
            return false;
        }

        Interlocked.Increment(ref _continuationsRun);
        thread.EnterCode(continuation.Owner, _time.GetTimestamp());
        SynchronizationContext.SetSynchronizationContext(continuation.Owner);
        try
        {
            continuation.Callback(continuation.State);
        }
        catch (Exception ex)
        {
            // A fire-and-forget piece of a job (an async void method) threw; awaited failures surface through the job's
            // task. It must neither unwind the thread nor be blamed on another job, so it is rethrown on the thread
            // pool, which ends the process as an unhandled exception in async void code always does.
            var captured = ExceptionDispatchInfo.Capture(ex);
            ThreadPool.UnsafeQueueUserWorkItem(static e => e.Throw(), captured, preferLocal: false);
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(null);
            thread.ExitCode();
        }

        return true;
    }

    internal bool TryStartJob(WorkerThread thread)
    {
        if (_paused)
        {
            return false;
        }

        // Reserve a slot under the concurrency limit before taking a job, so racing threads never overshoot it.
        int limit = MaxConcurrencyNow;
        int running;
        do
        {
            running = Volatile.Read(ref _running);
            if (running >= limit)
            {
                return false;
            }
        }
        while (Interlocked.CompareExchange(ref _running, running + 1, running) != running);

        if (!_retries.TryDequeue(out var item) && !Reader.TryRead(out item))
        {
            ReleaseSlot();
            return false;
        }

        // A job left in the channel while nobody leads gets a follower of its own now rather than after this one: its
        // writer may have seen a leader (this thread, before it resigned) and left the wake to it. The reads follow the
        // resign's and the slot's full fences, the writer's follow its write (see OnJobWritten): one of the two sees the
        // other. Cheap reads first, since counting the channel takes its lock.
        if (_parking.ParkedCount > 0 && !_parking.HasLeader && Reader.Count > 0 && CanStartJobs)
        {
            _parking.WakeFollowerIfLeaderless();
        }

        RunJob(thread, item);
        return true;
    }

    internal void OnYieldedJobCompleted(JobRun run)
    {
        if (WorkerThread.Current?.Pool == this)
        {
            Complete(run);
        }
        else
        {
            // Completed off the queue (the job opted out with ConfigureAwait(false)): settle it on a queue thread, where
            // the outcome's callbacks (dead letters, retries) belong.
            Post(run, s_complete, run);
        }
    }

    /// <summary>Reports continuations posted to a job whose thread waited inside the job's synchronous part.</summary>
    internal void OnSyncPartBlocked(JobRun run, int continuations)
    {
        try
        {
            for (int i = 0; i < continuations; i++)
            {
                _metrics.SyncOverAsync(_metricTag, WorkQueue.Telemetry.WorkQueueMetrics.SyncPartDetection);
            }

            ReportBlockingJobType(run, Log.SyncPartPost);
        }
        catch (Exception ex)
        {
            // A throwing metrics listener or logger must neither keep the continuations from running (they are sent on
            // after this) nor reach the posting thread (a client library's, or the engine's timer thread).
            _logger.TryLog(static (l, s) => Log.MonitorFailed(l, s.ex, s.QueueName), (ex, QueueName));
        }
    }

    private void RunJob(WorkerThread thread, in WorkItem item)
    {
        // Back to back with a job that ended on this thread, that job's end is this one's start (one clock read a job).
        long start = thread.TakeLastEnd();
        if (start == 0)
        {
            start = _time.GetTimestamp();
        }

        if (!_executor.OnStarting(item, start))
        {
            ReleaseSlot();
            return;
        }

        var run = thread.RentRun();
        var token = run.Begin(item, start, _settings.JobTimeout, _time);
        thread.EnterCode(run, start);
        SynchronizationContext.SetSynchronizationContext(run);
        ValueTask task = default;
        Exception? error = null;
        System.Diagnostics.Activity? trace = null;
        try
        {
            // The span is written through the out parameter before the job's code runs, so a job that throws at once
            // still has it ended.
            task = _executor.Invoke(item, token, out trace);
        }
        catch (Exception ex)
        {
            error = ex;
        }

        run.Trace = trace;

        run.EndSyncPart();
        SynchronizationContext.SetSynchronizationContext(null);
        if (error is null && !task.IsCompleted)
        {
            // The job yielded: it holds no thread until it continues, and keeps its run.
            run.Task = task;
            run.Yielded = true;
            AddYielded(run);
            thread.ExitCode();
            thread.GiveUpRun();
            task.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(run.CompletedAction);
            return;
        }

        thread.ExitCode();
        if (error is null)
        {
            try
            {
                task.GetAwaiter().GetResult();
            }
            catch (Exception ex)
            {
                error = ex;
            }
        }

        thread.SetLastEnd(Finish(run, error));
        run.Recycle();
    }

    /// <summary>Settles a yielded job whose task completed; runs on a queue thread (or the thread pool once shut).</summary>
    internal void Complete(JobRun run)
    {
        Exception? error = null;
        try
        {
            run.Task.GetAwaiter().GetResult();
        }
        catch (Exception ex)
        {
            error = ex;
        }

        run.Task = default;
        Finish(run, error);
    }

    /// <summary>Settles the run's attempt; returns the timestamp at which it ended.</summary>
    private long Finish(JobRun run, Exception? error)
    {
        long end = _time.GetTimestamp();
        var elapsed = _time.GetElapsedTime(run.StartTimestamp, end);
        var reason = run.CancelReason;
        if (run.Yielded)
        {
            RemoveYielded(run);
        }

        bool mine = run.End();
        try
        {
            if (mine)
            {
                _executor.OnFinished(run.Item, error, reason, elapsed, run.Trace);
            }
            else
            {
                // The shutdown reported it as still running; its span ends now that it returned.
                WorkQueue.Telemetry.WorkQueueTracing.StopJob(run.Trace, "abandoned", error);
            }
        }
        catch (Exception ex)
        {
            // Only bookkeeping (a throwing logger or metrics listener) gets here, after the job was settled.
            _logger.TryLog(static (l, s) => Log.BookkeepingFailed(l, s.ex, s.QueueName), (ex, QueueName));
        }
        finally
        {
            ReleaseSlot();
        }

        return end;
    }

    private void ReleaseSlot()
    {
        if (Interlocked.Decrement(ref _running) == 0 && _closed)
        {
            // The last running job of a closed pool: the parked threads may exit now.
            _parking.WakeAll();
        }
    }

    private void AddYielded(JobRun run)
    {
        lock (_yieldedLock)
        {
            run.Previous = null;
            run.Next = _yieldedHead;
            if (_yieldedHead is not null)
            {
                _yieldedHead.Previous = run;
            }

            _yieldedHead = run;
        }
    }

    private void RemoveYielded(JobRun run)
    {
        lock (_yieldedLock)
        {
            if (run.Previous is not null)
            {
                run.Previous.Next = run.Next;
            }
            else if (_yieldedHead == run)
            {
                _yieldedHead = run.Next;
            }

            if (run.Next is not null)
            {
                run.Next.Previous = run.Previous;
            }

            run.Previous = null;
            run.Next = null;
        }
    }

    /// <summary>Gets every run whose job is running now: those executing on a thread and those that yielded.</summary>
    private List<JobRun> RunningRuns()
    {
        var runs = new HashSet<JobRun>(ReferenceEqualityComparer.Instance);
        foreach (var thread in ThreadsSnapshot())
        {
            if (thread.CodeRun is { IsRunning: true } run)
            {
                runs.Add(run);
            }
        }

        lock (_yieldedLock)
        {
            for (var run = _yieldedHead; run is not null; run = run.Next)
            {
                runs.Add(run);
            }
        }

        return [.. runs];
    }

    private readonly record struct Continuation(SendOrPostCallback Callback, object? State, JobRun Owner);
}
