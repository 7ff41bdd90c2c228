using System.ComponentModel.DataAnnotations;
using Microsoft.Extensions.Options;
using WorkQueue.Validation;

namespace WorkQueue;

/// <summary>
/// Configures one named queue: its capacity, its worker pool, retries, timeouts and shutdown.
/// </summary>
/// <remarks>
/// Options are validated when the queue is created (and at host start-up); an invalid value fails with a message that
/// names the setting and the value.
/// </remarks>
public sealed class WorkQueueOptions
{
    /// <summary>
    /// The name of the queue that <c>IWorkQueue</c> resolves to.
    /// </summary>
    public const string DefaultQueueName = "default";

    /// <summary>
    /// Gets or sets the most jobs the queue holds waiting to start.
    /// </summary>
    /// <value>The default value is 10,000.</value>
    [Range(1, int.MaxValue)]
    public int Capacity { get; set; } = 10_000;

    /// <summary>
    /// Gets or sets what happens to a job enqueued while the queue is full.
    /// </summary>
    /// <value>The default value is <see cref="QueueFullMode.Wait"/>.</value>
    [EnumDataType(typeof(QueueFullMode))]
    public QueueFullMode FullMode { get; set; } = QueueFullMode.Wait;

    /// <summary>
    /// Gets or sets the fewest workers the pool keeps in automatic mode.
    /// </summary>
    /// <value>The default value is 1.</value>
    [Range(1, 1024)]
    public int MinWorkers { get; set; } = 1;

    /// <summary>
    /// Gets or sets the most dedicated threads the pool may run.
    /// </summary>
    /// <value>The default value is 16.</value>
    [Range(1, 1024)]
    public int MaxWorkers { get; set; } = 16;

    /// <summary>
    /// Gets or sets the most jobs that may run at once, or <see langword="null"/> for one job per thread.
    /// </summary>
    /// <remarks>
    /// An async job holds no thread while it awaits: its thread takes the next job while the queue is under this limit,
    /// and its continuations run on any of the queue's threads. Set it above <see cref="MaxWorkers"/> for I/O-bound
    /// async jobs (200 concurrent outbound calls on a handful of threads); leave it unset for blocking jobs, where
    /// each running job holds its thread anyway.
    /// </remarks>
    /// <value>The default value is <see langword="null"/>: at most as many jobs as threads, as before 0.2.</value>
    [Range(1, 1_000_000)]
    public int? MaxConcurrency { get; set; }

    /// <summary>
    /// Gets or sets how long a worker above <see cref="MinWorkers"/> stays idle before it retires (automatic mode only).
    /// </summary>
    /// <value>The default value is 30 seconds.</value>
    [TimeSpanRange("00:00:00.001", "1.00:00:00")]
    public TimeSpan IdleTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// Gets or sets how long one attempt of a job may run before its cancellation token is cancelled, or
    /// <see langword="null"/> for no limit. A job that ends by throwing after the timeout counts as timed out.
    /// </summary>
    /// <value>The default value is <see langword="null"/>.</value>
    public TimeSpan? JobTimeout { get; set; }

    /// <summary>
    /// Gets or sets how long a job may run without returning before it is reported as stuck (snapshot, admin JSON,
    /// log), when it has no <see cref="JobTimeout"/>; with one, a job is stuck once it outlives its timeout.
    /// </summary>
    /// <value>The default value is 5 minutes.</value>
    [TimeSpanRange("00:00:00.001", "49.00:00:00")]
    public TimeSpan StuckJobThreshold { get; set; } = TimeSpan.FromMinutes(5);

    /// <summary>
    /// Gets or sets how long <c>EnqueueAsync</c> waits for space in <see cref="QueueFullMode.Wait"/> mode before it
    /// throws <see cref="JobRejectedException"/>, or <see cref="Timeout.InfiniteTimeSpan"/> to wait until the caller cancels.
    /// </summary>
    /// <value>The default value is <see cref="Timeout.InfiniteTimeSpan"/>.</value>
    public TimeSpan EnqueueTimeout { get; set; } = Timeout.InfiniteTimeSpan;

    /// <summary>
    /// Gets or sets how long, after the shutdown deadline has cancelled the running jobs, the queue waits for them to
    /// return before it reports them as still running.
    /// </summary>
    /// <value>The default value is 2 seconds.</value>
    [TimeSpanRange("00:00:00", "00:10:00")]
    public TimeSpan ShutdownGracePeriod { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>
    /// Gets or sets a value indicating whether the queue tracks every job it accepts, so that
    /// <see cref="IWorkQueue.GetJobAsync(string, CancellationToken)"/>, <see cref="IWorkQueue.FindJobsAsync(JobQuery, CancellationToken)"/>, the admin
    /// endpoints and the dashboard's job browser see all of them. Off, only the jobs whose id is handed out are tracked
    /// (enqueued with <see cref="JobOptions"/>, or scheduled): <c>TryEnqueue</c> and <c>EnqueueAsync</c> without options
    /// take the untracked fast path. A durable queue sees every job in its store whatever this says.
    /// </summary>
    /// <remarks>
    /// A tracked job costs one small object and a dictionary entry while it waits and runs, and is kept for
    /// <see cref="FinishedJobRetention"/> (at most <see cref="MaxFinishedJobs"/>) once it ended; what that costs per job
    /// is measured in benchmarks/README.md ("Tracking every job").
    /// </remarks>
    /// <value>The default value is <see langword="false"/>.</value>
    public bool TrackAllJobs { get; set; }

    /// <summary>
    /// Gets or sets a value indicating whether a worker whose queue just ran dry spins briefly (bounded, as
    /// <see cref="SemaphoreSlim"/> does) before it parks, so that a job arriving right behind the last one is taken
    /// without a thread wake-up. Only the worker that would otherwise wait on the channel spins, and only right after
    /// work: an idle queue still costs no CPU.
    /// </summary>
    /// <remarks>
    /// Off by default: on the 2-core machine the benchmarks ran on, spinning helped throughput with 1 and 8 workers but
    /// hurt it with 2 and worsened the wake-up tail (benchmarks/README.md). Try it where there are cores to spare.
    /// </remarks>
    /// <value>The default value is <see langword="false"/>.</value>
    public bool SpinBeforeParking { get; set; }

    /// <summary>
    /// Gets or sets how many dead-lettered jobs the queue keeps in memory; older ones are evicted but still counted.
    /// </summary>
    /// <value>The default value is 100.</value>
    [Range(0, 1_000_000)]
    public int DeadLetterCapacity { get; set; } = 100;

    /// <summary>
    /// Gets or sets how many scheduled jobs (see <see cref="IWorkQueue.ScheduleAsync{THandler, TPayload}(TPayload, DateTimeOffset, CancellationToken)"/>)
    /// an in-memory queue holds while they wait for their time. Scheduled jobs do not take room in
    /// <see cref="Capacity"/> while they wait; when one comes due it goes to the queue's threads ahead of the queued jobs,
    /// whatever the room in <see cref="Capacity"/>, since it was accepted already.
    /// </summary>
    /// <remarks>Each waiting job costs about 200 bytes of memory and no timer of its own.</remarks>
    /// <value>The default value is 100,000.</value>
    [Range(0, 100_000_000)]
    public int MaxScheduledJobs { get; set; } = 100_000;

    /// <summary>
    /// Gets or sets how long an idempotency key (<see cref="JobOptions.IdempotencyKey"/>) stays held after its job
    /// succeeded, so that a repeat of the same request within that window adds no job either. Zero releases it at once.
    /// </summary>
    /// <remarks>A key held for the retention costs about 100 bytes; the queue drops expired ones as it goes.</remarks>
    /// <value>The default value is zero.</value>
    [TimeSpanRange("00:00:00", "7.00:00:00")]
    public TimeSpan IdempotencyKeyRetention { get; set; }

    /// <summary>
    /// Gets or sets how long <see cref="IWorkQueue.GetJobAsync(string, CancellationToken)"/> still reports a tracked job after it ended (for a
    /// durable queue, how long Redis keeps an ended job's record to answer it). Zero forgets a job as
    /// soon as it ends.
    /// </summary>
    /// <remarks>
    /// An ended job kept for the retention costs about 200 bytes (in Redis, for a durable queue: its record, with this
    /// expiry, and its entry in the list of its ending), plus, in memory, two 8-byte slots in the logs the job search
    /// (<see cref="IWorkQueue.FindJobsAsync(JobQuery, CancellationToken)"/>) reads; see also <see cref="MaxFinishedJobs"/>.
    /// </remarks>
    /// <value>The default value is 10 minutes.</value>
    [TimeSpanRange("00:00:00", "7.00:00:00")]
    public TimeSpan FinishedJobRetention { get; set; } = TimeSpan.FromMinutes(10);

    /// <summary>
    /// Gets or sets the most ended jobs <see cref="IWorkQueue.GetJobAsync(string, CancellationToken)"/> and
    /// <see cref="IWorkQueue.FindJobsAsync(JobQuery, CancellationToken)"/> still report (for a durable queue, the most of each ending,
    /// succeeded, dead-lettered or cancelled, Redis keeps, trimmed about every 100 ms); the oldest endings are forgotten
    /// first, even within <see cref="FinishedJobRetention"/>. Zero forgets a job as soon as it ends.
    /// </summary>
    /// <value>The default value is 10,000.</value>
    [Range(0, 10_000_000)]
    public int MaxFinishedJobs { get; set; } = 10_000;

    /// <summary>
    /// Gets the retry policy for failed jobs.
    /// </summary>
    [ValidateObjectMembers]
    public RetryOptions Retry { get; } = new();

    /// <summary>
    /// Gets the autoscaling policy.
    /// </summary>
    [ValidateObjectMembers]
    public AutoScaleOptions AutoScale { get; } = new();

    /// <summary>
    /// Gets or sets a callback invoked (on the enqueuing thread, outside any lock) for each job dropped by
    /// <see cref="QueueFullMode.DropOldest"/>. Exceptions it throws are logged and ignored.
    /// </summary>
    /// <value>The default value is <see langword="null"/>.</value>
    public Action<JobInfo>? OnJobDropped { get; set; }

    /// <summary>
    /// Gets or sets a callback invoked (on the worker) for each job that failed its last attempt.
    /// Exceptions it throws are logged and ignored.
    /// </summary>
    /// <value>The default value is <see langword="null"/>.</value>
    public Action<DeadLetteredJob>? OnJobDeadLettered { get; set; }
}
