using System.Diagnostics;

namespace WorkQueue.AspNetCore.Dashboard;

/// <summary>The most recent samples of one queue, in a fixed-size ring.</summary>
internal sealed class QueueHistory
{
    private readonly QueueSample[] _ring;
    private readonly object _lock = new();
    private int _next;
    private int _count;

    public QueueHistory(string name, int capacity)
    {
        Debug.Assert(capacity > 0, "A history holds at least one sample.");
        Name = name;
        _ring = new QueueSample[capacity];
    }

    /// <summary>Gets the queue's name.</summary>
    public string Name { get; }

    /// <summary>Records a snapshot, with the throughput since the previous one.</summary>
    public void Record(DateTimeOffset at, WorkQueueSnapshot snapshot)
    {
        // Times travel as Unix milliseconds; keeping them at that resolution makes "after the last one I saw" exact.
        at = DateTimeOffset.FromUnixTimeMilliseconds(at.ToUnixTimeMilliseconds());
        lock (_lock)
        {
            double jobsPerSecond = 0;
            if (_count > 0)
            {
                var previous = _ring[(_next - 1 + _ring.Length) % _ring.Length];
                double seconds = (at - previous.At).TotalSeconds;
                if (seconds > 0)
                {
                    jobsPerSecond = Math.Max(0, Ended(snapshot) - Ended(previous.Snapshot)) / seconds;
                }
            }

            _ring[_next] = new QueueSample(at, snapshot, jobsPerSecond);
            _next = (_next + 1) % _ring.Length;
            _count = Math.Min(_count + 1, _ring.Length);
        }
    }

    /// <summary>Gets the samples taken after <paramref name="since"/>, oldest first.</summary>
    public QueueSample[] After(DateTimeOffset since)
    {
        lock (_lock)
        {
            var samples = new List<QueueSample>(_count);
            int oldest = (_next - _count + _ring.Length) % _ring.Length;
            for (int i = 0; i < _count; i++)
            {
                var sample = _ring[(oldest + i) % _ring.Length];
                if (sample.At > since)
                {
                    samples.Add(sample);
                }
            }

            return samples.ToArray();
        }
    }

    private static long Ended(WorkQueueSnapshot snapshot) => snapshot.Totals.Succeeded + snapshot.Totals.DeadLettered;
}
