using System.Collections;
using System.Diagnostics;

namespace PayCallbackApi.Tests.TestSupport;

/// <summary>
/// The collection an in-memory exporter writes finished spans to, safe to read while the app's threads write it.
/// Every app in the test process shares the activity sources, so readers pick their spans by trace id.
/// </summary>
internal sealed class SpanRecorder : ICollection<Activity>
{
    private readonly Lock _lock = new();
    private readonly List<Activity> _spans = [];

    public int Count
    {
        get
        {
            lock (_lock)
            {
                return _spans.Count;
            }
        }
    }

    public bool IsReadOnly => false;

    /// <summary>Gets a copy of the finished spans of one trace.</summary>
    public IReadOnlyList<Activity> InTrace(ActivityTraceId traceId)
    {
        lock (_lock)
        {
            return _spans.Where(s => s.TraceId == traceId).ToList();
        }
    }

    public void Add(Activity item)
    {
        lock (_lock)
        {
            _spans.Add(item);
        }
    }

    public void Clear()
    {
        lock (_lock)
        {
            _spans.Clear();
        }
    }

    public bool Contains(Activity item)
    {
        lock (_lock)
        {
            return _spans.Contains(item);
        }
    }

    public void CopyTo(Activity[] array, int arrayIndex)
    {
        lock (_lock)
        {
            _spans.CopyTo(array, arrayIndex);
        }
    }

    public bool Remove(Activity item)
    {
        lock (_lock)
        {
            return _spans.Remove(item);
        }
    }

    public IEnumerator<Activity> GetEnumerator()
    {
        lock (_lock)
        {
            return _spans.ToList().GetEnumerator();
        }
    }

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
}
