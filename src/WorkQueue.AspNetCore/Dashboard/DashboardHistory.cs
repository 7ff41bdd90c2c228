using System.Collections.Concurrent;

namespace WorkQueue.AspNetCore.Dashboard;

/// <summary>The recent samples of every queue, kept for the dashboard so a page opened now shows the last minutes.</summary>
internal sealed class DashboardHistory
{
    /// <summary>The time between two samples.</summary>
    public static readonly TimeSpan Interval = TimeSpan.FromSeconds(1);

    /// <summary>The samples kept per queue: five minutes at one a second.</summary>
    public const int Length = 300;

    private readonly ConcurrentDictionary<string, QueueHistory> _queues = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>Records one snapshot of a queue.</summary>
    public void Record(DateTimeOffset at, WorkQueueSnapshot snapshot) =>
        _queues.GetOrAdd(snapshot.Name, name => new QueueHistory(name, Length)).Record(at, snapshot);

    /// <summary>Gets the history of a queue, if it was sampled.</summary>
    public QueueHistory? Find(string queue) => _queues.TryGetValue(queue, out var history) ? history : null;
}
