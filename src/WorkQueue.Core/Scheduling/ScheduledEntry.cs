using WorkQueue.Internal;

namespace WorkQueue.Scheduling;

/// <summary>One scheduled job: what to run, when, and the set that owns it until it comes due.</summary>
internal sealed class ScheduledEntry(ScheduledJobSet owner, WorkItem item, DateTimeOffset dueAt, DateTimeOffset scheduledAt)
{
    private volatile bool _removed;

    public ScheduledJobSet Owner { get; } = owner;

    public WorkItem Item { get; } = item;

    public DateTimeOffset DueAt { get; } = dueAt;

    public DateTimeOffset ScheduledAt { get; } = scheduledAt;

    /// <summary>Gets a value indicating whether the entry left its set before its time (cancelled or stopped): its heap entry is stale.</summary>
    public bool IsRemoved => _removed;

    public void MarkRemoved() => _removed = true;
}
