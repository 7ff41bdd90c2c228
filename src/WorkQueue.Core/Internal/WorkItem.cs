using System.Diagnostics;
using WorkQueue.Tracking;

namespace WorkQueue.Internal;

/// <summary>
/// One queued job. A struct, so that writing it to the channel allocates nothing.
/// </summary>
internal readonly struct WorkItem
{
    public WorkItem(JobInvoker invoker, object? target, object? state, long id, long enqueuedTimestamp, int attempt, Activity? parent = null, string? key = null, TrackedJob? tracked = null)
    {
        Tracked = tracked;
        Parent = parent;
        Key = key;
        Invoker = invoker;
        Target = target;
        State = state;
        Id = id;
        EnqueuedTimestamp = enqueuedTimestamp;
        Attempt = attempt;
    }

    /// <summary>The cached, stateless object that knows how to run this kind of job.</summary>
    public JobInvoker Invoker { get; }

    /// <summary>The delegate or handler instance, if any.</summary>
    public object? Target { get; }

    /// <summary>The payload, if any.</summary>
    public object? State { get; }

    public long Id { get; }

    /// <summary>A <see cref="System.Diagnostics.Stopwatch"/> timestamp taken when this attempt was queued.</summary>
    public long EnqueuedTimestamp { get; }

    public int Attempt { get; }

    /// <summary>The job's idempotency key, if it was enqueued with one (released when the job ends).</summary>
    public string? Key { get; }

    /// <summary>
    /// The job's state by id, when its id was handed out (enqueued with options, or scheduled); <see langword="null"/>
    /// for jobs enqueued without options, which are not tracked.
    /// </summary>
    public TrackedJob? Tracked { get; }

    /// <summary>
    /// The activity that was current when the job was enqueued (a request's, say), captured only while someone listens
    /// to the <c>WorkQueue</c> activity source: the parent of the job's span, so a trace reads request -> job.
    /// </summary>
    public Activity? Parent { get; }

    /// <summary>The same attempt, queued anew (a scheduled job that came due).</summary>
    public WorkItem WithEnqueuedTimestamp(long enqueuedTimestamp) =>
        new(Invoker, Target, State, Id, enqueuedTimestamp, Attempt, Parent, Key, Tracked);

    public WorkItem ForNextAttempt(long enqueuedTimestamp) =>
        new(Invoker, Target, State, Id, enqueuedTimestamp, Attempt + 1, Parent, Key, Tracked);

    public JobInfo Describe(string queueName) =>
        new(JobIds.Format(Id), queueName, Invoker.Describe(Target), Invoker.GetPayload(Target, State), Attempt);
}
