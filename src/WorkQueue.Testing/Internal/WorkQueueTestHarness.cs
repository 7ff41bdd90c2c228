using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;
using WorkQueue.Queueing;

namespace WorkQueue.Testing.Internal;

/// <summary>
/// The harness: the record of enqueued jobs, the queues' modes, the jobs it holds (Record mode) or runs (Inline mode),
/// and the idle wait (<see cref="WorkQueueTestHarness"/>.Idle.cs).
/// </summary>
internal sealed partial class WorkQueueTestHarness : IWorkQueueTestHarness
{
    private readonly Lock _lock = new();
    private readonly List<EnqueuedJob> _jobs = [];
    private readonly Dictionary<string, WorkQueueTestMode> _modes;
    private readonly IServiceProvider _services;
    private readonly TimeSpan _idleTimeout;
    private readonly Lazy<TestingWorkQueueProvider> _provider;
    private WorkQueueTestMode _mode;
    private long _nextId;
    private int _inlineRunning;

    public WorkQueueTestHarness(WorkQueueTestingOptions options, IServiceProvider services)
    {
        _mode = options.Mode;
        _modes = new Dictionary<string, WorkQueueTestMode>(options.QueueModes, StringComparer.OrdinalIgnoreCase);
        Clock = options.FakeTime;
        _idleTimeout = options.IdleTimeout;
        _services = services;
        _provider = new Lazy<TestingWorkQueueProvider>(() => new TestingWorkQueueProvider(services.GetRequiredService<WorkQueueProvider>(), this));
    }

    public FakeTimeProvider? Clock { get; }

    /// <summary>Gets the engine's provider with its producers wrapped.</summary>
    public TestingWorkQueueProvider Provider => _provider.Value;

    public IReadOnlyList<EnqueuedJob> Enqueued
    {
        get
        {
            lock (_lock)
            {
                return [.. _jobs];
            }
        }
    }

    public IReadOnlyList<EnqueuedJob> EnqueuedFor<THandler>(string? queueName = null)
    {
        lock (_lock)
        {
            return [.. _jobs.Where(j => j.HandlerType == typeof(THandler) && (queueName is null || string.Equals(j.QueueName, queueName, StringComparison.OrdinalIgnoreCase)))];
        }
    }

    public void Clear()
    {
        lock (_lock)
        {
            _jobs.Clear();
        }
    }

    public WorkQueueTestMode GetMode(string queueName)
    {
        ArgumentNullException.ThrowIfNull(queueName);
        lock (_lock)
        {
            return _modes.TryGetValue(queueName, out var mode) ? mode : _mode;
        }
    }

    public void SetMode(WorkQueueTestMode mode, string? queueName = null)
    {
        if (!Enum.IsDefined(mode))
        {
            throw new ArgumentOutOfRangeException(nameof(mode), mode, $"{(int)mode} is not a WorkQueueTestMode.");
        }

        lock (_lock)
        {
            if (queueName is null)
            {
                _mode = mode;
                _modes.Clear();
            }
            else
            {
                _modes[queueName] = mode;
            }
        }
    }

    public async Task<int> RunHeldAsync(string? queueName = null, CancellationToken cancellationToken = default)
    {
        int ran = 0;
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            EnqueuedJob? next;
            lock (_lock)
            {
                next = _jobs.Find(j => j.Mode == WorkQueueTestMode.Record && j.Created && j.Run is not null
                    && j.State is JobState.Queued or JobState.Scheduled
                    && (queueName is null || string.Equals(j.QueueName, queueName, StringComparison.OrdinalIgnoreCase)));
                if (next is not null)
                {
                    // Taken under the lock: no longer held, so its key is free and a second caller does not run it too.
                    next.State = JobState.Running;
                }
            }

            if (next is null)
            {
                return ran;
            }

            await RunInlineAsync(next, next.Run!, cancellationToken).ConfigureAwait(false);
            ran++;
        }
    }

    public async Task AdvanceTimeAsync(TimeSpan by, TimeSpan? timeout = null, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(by, TimeSpan.Zero);
        var clock = Clock ?? throw new InvalidOperationException("The engine runs on its real clock: give AddWorkQueueTesting a fake one (options.FakeTime = new FakeTimeProvider(...)) to move it.");

        // The engine first (its queues and recurring jobs arm their timers when it is built), so that moving the clock
        // fires them: a container without a host builds it on first use, which may be this call.
        _ = Provider;

        // FakeTimeProvider fires the timers that came due inside Advance, on this thread: the engine's scheduler hands
        // due jobs to their queues and recurring jobs enqueue their occurrences before it returns, so the idle wait
        // below sees them as queued.
        clock.Advance(by);
        await WaitUntilIdleAsync(timeout, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Gets the current time on the engine's clock.</summary>
    internal DateTimeOffset Now => Clock?.GetUtcNow() ?? DateTimeOffset.UtcNow;

    /// <summary>Records a call; in Record mode, an idempotency key held by an earlier held job of the queue makes it not created, with that job's id.</summary>
    internal EnqueuedJob Record(string queue, Type? handler, object? payload, JobOptions? options, TimeSpan? delay, DateTimeOffset? runAt, WorkQueueTestMode mode, Func<IServiceProvider, CancellationToken, ValueTask> run)
    {
        lock (_lock)
        {
            string? id = mode == WorkQueueTestMode.Run ? null : NewIdLocked();
            bool created = true;
            if (mode == WorkQueueTestMode.Record && options?.IdempotencyKey is { } key && FindKeyHolderLocked(queue, key) is { } holder)
            {
                id = holder.JobId;
                created = false;
            }

            var job = new EnqueuedJob(queue, handler, payload, id, options?.IdempotencyKey, delay ?? options?.Delay, runAt ?? options?.RunAt, created, mode, Now)
            {
                Run = mode == WorkQueueTestMode.Run ? null : run,
            };
            if (mode == WorkQueueTestMode.Inline)
            {
                job.State = JobState.Running;
            }

            _jobs.Add(job);
            return job;
        }
    }

    /// <summary>Sets what the queue answered for a job recorded in Run mode.</summary>
    internal void Answered(EnqueuedJob job, string? jobId, bool created)
    {
        lock (_lock)
        {
            job.JobId = jobId;
            job.Created = created;
        }
    }

    /// <summary>Forgets a call that the queue refused with an exception (it added no job).</summary>
    internal void Forget(EnqueuedJob job)
    {
        lock (_lock)
        {
            _jobs.Remove(job);
        }
    }

    /// <summary>Gets a job the harness made the id of (held or run inline), on the queue.</summary>
    internal bool TryFind(string queue, string jobId, [NotNullWhen(true)] out EnqueuedJob? job)
    {
        lock (_lock)
        {
            return TryFindLocked(queue, jobId, out job);
        }
    }

    private bool TryFindLocked(string queue, string jobId, [NotNullWhen(true)] out EnqueuedJob? job)
    {
        job = _jobs.Find(j => j.Mode != WorkQueueTestMode.Run && j.Created && j.JobId == jobId && string.Equals(j.QueueName, queue, StringComparison.OrdinalIgnoreCase));
        return job is not null;
    }

    /// <summary>Gets the status of a job the harness made the id of, as a queue would answer it.</summary>
    internal JobStatus? Status(string queue, string jobId)
    {
        lock (_lock)
        {
            return TryFindLocked(queue, jobId, out var job) ? StatusLocked(job) : null;
        }
    }

    /// <summary>Cancels a held job; <paramref name="scheduledOnly"/> as <c>CancelScheduledAsync</c> does (a job waiting for its time).</summary>
    internal JobCancelResult? Cancel(string queue, string jobId, bool scheduledOnly)
    {
        lock (_lock)
        {
            if (!TryFindLocked(queue, jobId, out var job))
            {
                return null;
            }

            if (job.Mode == WorkQueueTestMode.Record && (job.State == JobState.Scheduled || (!scheduledOnly && job.State == JobState.Queued)))
            {
                job.State = JobState.Canceled;
                return new JobCancelResult(JobCancelOutcome.Canceled, StatusLocked(job));
            }

            return new JobCancelResult(JobCancelOutcome.AlreadyFinished, StatusLocked(job));
        }
    }

    /// <summary>Runs a job inline, in a service scope of its own, and records how it ended.</summary>
    internal async ValueTask RunInlineAsync(EnqueuedJob job, Func<IServiceProvider, CancellationToken, ValueTask> run, CancellationToken cancellationToken)
    {
        Interlocked.Increment(ref _inlineRunning);
        try
        {
            var scope = _services.GetRequiredService<IServiceScopeFactory>().CreateAsyncScope();
            await using (scope.ConfigureAwait(false))
            {
                await run(scope.ServiceProvider, cancellationToken).ConfigureAwait(false);
            }

            SetState(job, JobState.Succeeded, null);
        }
        catch (Exception ex)
        {
            SetState(job, JobState.DeadLettered, $"{ex.GetType().FullName}: {ex.Message}");
            throw;
        }
        finally
        {
            Interlocked.Decrement(ref _inlineRunning);
        }
    }

    /// <summary>Runs a job inline from a synchronous call (<c>TryEnqueue</c>, <c>Schedule</c>), blocking until it ends.</summary>
    internal void RunInline(EnqueuedJob job, Func<IServiceProvider, CancellationToken, ValueTask> run)
    {
        var task = RunInlineAsync(job, run, CancellationToken.None);
        if (!task.IsCompleted)
        {
            // A test's synchronous producer call: blocking on the job is what "inline" means here.
            task.AsTask().GetAwaiter().GetResult();
            return;
        }

        task.GetAwaiter().GetResult();
    }

    private void SetState(EnqueuedJob job, JobState state, string? error)
    {
        lock (_lock)
        {
            job.State = state;
            job.Error = error;
        }
    }

    private string NewIdLocked() => "test-" + (++_nextId).ToString(CultureInfo.InvariantCulture);

    private EnqueuedJob? FindKeyHolderLocked(string queue, string key) =>
        _jobs.Find(j => j.Mode == WorkQueueTestMode.Record && j.Created && j.IdempotencyKey == key
            && j.State is JobState.Queued or JobState.Scheduled
            && string.Equals(j.QueueName, queue, StringComparison.OrdinalIgnoreCase));

    private static JobStatus StatusLocked(EnqueuedJob job) =>
        new(
            job.JobId!,
            job.QueueName,
            job.HandlerType?.FullName ?? "delegate",
            job.State,
            Attempt: job.State is JobState.Queued or JobState.Scheduled or JobState.Canceled ? 0 : 1,
            job.EnqueuedAt,
            StateSince: null,
            RunAt: job.RunAt ?? (job.Delay is { } delay ? job.EnqueuedAt + delay : null),
            StartedAt: null,
            WorkerName: null,
            LastError: job.Error,
            CancelRequested: job.State == JobState.Canceled)
        {
            Payload = job.Payload,
        };
}
